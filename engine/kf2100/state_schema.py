# mypy: disable-error-code="valid-type"
"""The saved position's schema (msgspec): every field's type and range, checked before the rules look at
what the position means, and the log lines the rules write.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated, Any, Literal

import msgspec

from engine.kf2100.board import Board
from engine.kf2100.data import CHIT_TECHNIQUES, GRADES, TECHNIQUES, WEAPON_CHITS
from engine.kf2100.figures import (
    PHASES,
    STATUSES,
)

# --- the saved state's schema (msgspec): every field's type and range, before the rules look at its meaning ---
_ID = r"(?:CM|[A-Z]{1,2}[0-9]{1,2})"
_Id = Annotated[str, msgspec.Meta(pattern=f"^{_ID}$")]
_IdOrNone = Annotated[str, msgspec.Meta(pattern=f"^(?:{_ID})?$")]
_Chit = Literal[CHIT_TECHNIQUES + WEAPON_CHITS]
_Entry = Literal["door", "disposal", "loo"]
_Small = Annotated[int, msgspec.Meta(ge=0, le=20)]
_Level = Annotated[int, msgspec.Meta(ge=0, le=9)]
_Square = Annotated[str, msgspec.Meta(pattern="^[a-z][0-9]{1,2}$")]
_Turn = Annotated[int, msgspec.Meta(ge=1, le=99)]
_Phase = Literal[PHASES]
_CHANCES = tuple(str(Fraction(k, 6)) for k in range(7))
COMBAT_STEPS = ("pick", "lead", "attack", "answer", "roll", "loss", "aim", "untrained", "done")


class _FigureFile(msgspec.Struct, forbid_unknown_fields=True):
    id: _Id
    kind: str
    weapon: str
    start: Annotated[list[_Level], msgspec.Meta(max_length=len(TECHNIQUES))]
    levels: Annotated[list[_Level], msgspec.Meta(max_length=len(TECHNIQUES))]
    pos: Annotated[int, msgspec.Meta(ge=-1, le=9999)]
    status: Literal[STATUSES]
    face_up: bool
    entry: Literal["", "door", "disposal", "loo"]
    mp: _Small


class _CombatFile(msgspec.Struct, forbid_unknown_fields=True):
    members: list[_Id]
    to_pick: list[_Id]
    chits: dict[_Id, Annotated[list[_Chit], msgspec.Meta(max_length=20)]]
    step: Literal[COMBAT_STEPS]
    turn: Literal[0, 1]
    attack: tuple[_Id, _Chit, _Id] | None
    answer: tuple[_Id, _Chit] | None
    need: Annotated[int, msgspec.Meta(ge=0, le=6)]
    pending_loss: _IdOrNone
    untrained: list[tuple[_Id, Annotated[int, msgspec.Meta(ge=1, le=20)]]]


class _StateFile(msgspec.Struct, forbid_unknown_fields=True):
    turn: _Turn
    phase: _Phase
    door_broken: bool
    bonus_mp: _Small
    figures: Annotated[list[_FigureFile], msgspec.Meta(max_length=99)]
    equipment: dict[_Id, bool]
    entered: dict[_Entry, _Small]
    activated: Annotated[list[str], msgspec.Meta(max_length=20)]
    door_step: bool
    door_chits: dict[_Id, Annotated[list[Literal["fist", "kick"]], msgspec.Meta(max_length=9)]]
    combats: Annotated[list[list[_Id]], msgspec.Meta(max_length=99)]
    cm_window: bool
    opened: bool
    combat: _CombatFile | None
    queue: Annotated[list[Annotated[str, msgspec.Meta(pattern=f"^(?:door:{_ID}:(?:fist|kick)|{_ID})$")]],
                     msgspec.Meta(max_length=99)]
    deal_rooms: Annotated[list[Annotated[str, msgspec.Meta(pattern="^[a-z_0-9]{1,30}$")]], msgspec.Meta(max_length=99)]
    constabulary_in: Annotated[int, msgspec.Meta(ge=0, le=99)]
    result: Literal[("", *GRADES)]
    log: list[dict[str, Any]]


class _RulesFile(msgspec.Struct, forbid_unknown_fields=True):
    scenario: Annotated[str, msgspec.Meta(max_length=20)] = "basic"
    terminator_levels: dict[_Id, Annotated[list[_Level], msgspec.Meta(max_length=len(TECHNIQUES))]] | None = None


class _EventEntry(msgspec.Struct, forbid_unknown_fields=True):
    turn: _Turn
    phase: _Phase
    event: Annotated[str, msgspec.Meta(max_length=120)]


class _RollEntry(msgspec.Struct, forbid_unknown_fields=True):
    turn: _Turn
    phase: _Phase
    roll: Annotated[int, msgspec.Meta(ge=1, le=6)]
    need: _Small
    what: Annotated[str, msgspec.Meta(max_length=120)]
    p: Literal[_CHANCES]
    result: Literal["door broken", "recovers a level", "hit", "miss"]
    target: _Id | msgspec.UnsetType = msgspec.UNSET
    target_side: Literal[0, 1] | msgspec.UnsetType = msgspec.UNSET


def _log_patterns(board: Board) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The log lines the rules write (``_event`` and ``_roll_log``), as patterns: a saved log holds nothing else."""
    fig, tech = _ID, "|".join(TECHNIQUES)
    rooms = "|".join(re.escape(r.name) for r in board.lair.rooms.values())
    grades = "|".join(g.replace("_", " ") for g in GRADES)
    events = "|".join([
        f"{fig} destroyed", f"{fig} loses a level of (?:{tech})", f"{fig} is unconscious", f"{fig} (?:killed|removed)",
        f"{fig} escapes through the (?:door|disposal|loo)", f"{fig} enters by the (?:door|disposal|loo)",
        f"{fig} regains consciousness", f"{fig} arrives at the front door", f"game over: (?:{grades})",
        f"{fig} activated \\((?:{fig} entered the (?:{rooms})|nearest the Terminator|by the Clone Master)\\)",
    ])
    chit = "|".join((*CHIT_TECHNIQUES, *WEAPON_CHITS))
    rolls = "|".join([
        f"{fig} (?:fist|kick)s the armored door", f"{fig} Mountain Heart recovery",
        f"untrained attack by [0-9]{{1,2}} on {fig}",
        f"{fig} (?:{chit}) on {fig} \\(answer (?:none|{fig} (?:{chit}))\\)",
    ])
    return re.compile(f"(?:{events})"), re.compile(f"(?:{rolls})")
