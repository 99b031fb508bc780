"""The arena in 3-D with MuJoCo: a floor with four real corner holes, rails with height, cubes that tumble.

The model is built from ``constants.toml`` (``[arena]``, ``[die]``, ``[friction]``, ``[restitution]``,
``[arena3d]``), in metres and kilograms; this package's interface is in millimetres like ``physics.py``.

* **Floor**: a plane at z = 0, without seams for a sliding die to catch on. Each corner hole is a regular
  polygon cut out of a square of "rim pieces" (convex prisms ``floor_depth`` deep, one per side of the
  polygon, coplanar with the plane). A die whose centre comes within ``rim_zone`` of a hole's centre collides
  with that hole's rim pieces instead of the plane (its collision bits are switched, checked every
  ``rim_check_every`` steps, close enough that the plane never carries a die over a hole). So a die falls
  into a hole by geometry: it tips over the rim once its centre passes it and lands in the well, on the
  table plane ``floor_depth`` below.
* **Rails**: boxes ``rail_height`` above the floor; their midpoints carry the dots (sites, for drawing).
* **Dice**: free boxes of the designed edge and mass (sharp edges: MuJoCo's box-box collider is fast and
  gives up to eight contact points; a rounded mesh would cost several times more).
* **Contacts**: friction is Coulomb (elliptic cones) with the design coefficients. MuJoCo's contacts are
  soft: a hit is a damped spring with time constant ``contact_timeconst`` whose damping ratio is that of a
  damped oscillator with the design restitution, zeta = -ln e / sqrt(pi^2 + ln^2 e). ``dojo zoo calibrate``
  measures what that gives. Geom priorities pick the pair's parameters: floor > rails > dice.
* **Sleeping**: ``<flag sleep="enable"/>``: a die slower than ``sleep_tolerance`` for ten steps sleeps and
  costs nothing until something touches it; a run ends when every die sleeps.

A flick is a strike (``Launch``): a die set on the rail top at a dot (or anywhere on a rail), square to it,
is struck on its back face at height ``strike`` (low: a push that slides; high: topspin that tumbles), with a
small random sideways offset of the strike point drawn from the generator (a little yaw spin). It slides
off the rail's inner edge and drops onto the floor. Rulings this module applies (stated so they can be
checked):

* **Faces**: a die's face is the one whose outward normal points most nearly up, also for a die at rest
  leaning on a rail or on another die.
* **Must tumble** (FAQ): the flicked die tumbled if at some moment a face other than the one it started with
  pointed up within ``acos(tumble_settle)``; a tip that falls back is not a tumble. A flicked die that did
  not tumble is turned feet-up where it lies.
* **Contacts after the launch**: the flicked die's touches of dice and rails are listed in order. Touches of
  the rail it starts on count only once it has left its start: its centre more than half its space diagonal
  from that rail's inner face, so that it can touch it again only by coming back.
* **Caged**: a die whose centre ends below the floor's top inside a hole. **Out**: a die whose centre ends
  over a rail or beyond (it hopped out, or never left the rail it was flicked from); ``left`` names the rail.
* **A spot already taken**: a die is set on the rail top, square to it and ``launch_gap`` short of its inner
  edge, so it never overlaps a die lying in the arena at that dot; a flick from the dot strikes that die at
  once. Should it overlap a die leaning over the rail's edge, it is set down at the nearest free point along
  the rail (``free_spot_step`` at a time, up to ``free_spot_reach``), and an event says so.

The game (``engine.zoo.game``) keeps each result's exact pose (``DieBody.z``, ``quat``) in its state, so a die
that ended leaning, or on another die, is set back exactly so for the next flick. Recorded frames (``record``)
list a die in ``dice`` while it is in play and in ``gone`` once it has fallen into a well or gone over a rail;
each die's yaw is unwrapped by quarter turns between frames.

Runs are deterministic: MuJoCo is deterministic on one machine, every run starts from a reset state, and
the only random draw is the strike offset from the generator passed in.
"""

from engine.zoo.arena3d.model import Kit, kit_for, model_xml, rim_square
from engine.zoo.arena3d.params import (
    MM,
    RAILS,
    Params3D,
    contact_dampratio,
    default_params,
    head_on_restitution,
    launch_point,
    rail_under,
    restitution_dampratio,
)
from engine.zoo.arena3d.pose import face_up, feet_up_matrix, pose_matrix, snap
from engine.zoo.arena3d.run import DieBody, Launch, SimResult, prepared, simulate, strike_velocity

__all__ = [
    "MM", "RAILS", "DieBody", "Kit", "Launch", "Params3D", "SimResult", "contact_dampratio", "default_params",
    "face_up", "feet_up_matrix", "head_on_restitution", "kit_for", "launch_point", "model_xml", "pose_matrix",
    "prepared", "rail_under", "restitution_dampratio", "rim_square", "simulate", "snap", "strike_velocity",
]
