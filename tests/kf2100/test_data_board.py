"""Kung Fu 2100 data files and board geometry: the loader's errors and the movement / sight rules."""

from importlib import resources

import pytest

from engine.kf2100.board import standard_board
from engine.kf2100.data import DataError, load_rulebook, rulebook


def _text(name: str) -> str:
    return resources.files("engine.kf2100").joinpath("data", name).read_text()


# --- data ---------------------------------------------------------------------------------------

def test_packaged_data_has_what_the_seed_names():
    book = rulebook()
    lair = book.lair
    kinds = [t for _, t in lair.equipment.values()]
    assert len(lair.equipment) == 7 and kinds.count("clone_bank") == 4 and kinds.count("computer") == 3
    assert set(lair.entries) == {"disposal", "loo"} and lair.front_door >= 0
    assert book.crt["kick"]["mist"] == 1 and book.crt["fist"]["none"] == 5
    assert book.units.rules["door_breaks_at_most"] == 2 and book.units.rules["recovery_at_most"] == 2
    assert sum(book.units.terminators["T1"]) == 7
    assert {k: s.turns for k, s in book.scenarios.scenarios.items()} == {"basic": 10, "advanced": 12, "solo": 12}
    basic = book.scenarios.scenarios["basic"]
    assert len(basic.jellies) == 8 and "J11" not in basic.jellies and "J12" not in basic.jellies
    assert (basic.armed_technicians, basic.unarmed_technicians, basic.servants) == (2, 10, 12)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_map_error_names_the_line():
    text = _text("map.txt")
    bad = text.replace("#k@kk#", "#k?kk#")
    with pytest.raises(DataError, match=rf"map.txt, line {_line_of(text, '#k@kk#')}: character '\?' at c3"):
        load_rulebook({"map.txt": bad})


def test_map_rows_must_be_equal_length():
    text = _text("map.txt")
    bad = text.replace("#kkkk+ww+", "#kkkk+ww+#", 1)
    with pytest.raises(DataError, match=rf"line {_line_of(text, '#kkkk+ww+')}: grid row has 27"):
        load_rulebook({"map.txt": bad})


def test_crt_error_names_the_line():
    text = _text("crt.csv")
    bad = text.replace("kick,4,3,1,1,3,5", "kick,4,3,x,1,3,5")
    with pytest.raises(DataError, match=rf"crt.csv, line {_line_of(text, 'kick,4')}: kick/mist: 'x'"):
        load_rulebook({"crt.csv": bad})
    with pytest.raises(DataError, match="7 is not a d6 target"):
        load_rulebook({"crt.csv": text.replace("gun,3,3,1,1,3,4", "gun,3,3,1,1,3,7")})


def test_units_and_scenarios_errors_name_the_line():
    units = _text("units.toml")
    bad = units.replace('weapon = "spikes"', 'weapon = "nunchaku"', 1)
    with pytest.raises(DataError, match=r"units.toml, line \d+: \[jellies.J7\]: unknown weapon 'nunchaku'"):
        load_rulebook({"units.toml": bad})
    with pytest.raises(DataError, match=r"units.toml, line \d+: not valid TOML"):
        load_rulebook({"units.toml": units + "\n[[[\n"})
    scen = _text("scenarios.toml")
    bad = scen.replace('"J8"]', '"J13"]', 1)
    with pytest.raises(DataError, match=rf"scenarios.toml, line {_line_of(scen, '[scenarios.basic]')}: .*J13"):
        load_rulebook({"scenarios.toml": bad})
    bad = scen.replace('terminator_square = "g2"', 'terminator_square = "a1"')
    with pytest.raises(DataError, match=rf"line {_line_of(scen, 'terminator_square')}: .*not a floor square"):
        load_rulebook({"scenarios.toml": bad})


# --- board ---------------------------------------------------------------------------------------

B = standard_board()
sq = B.square


def cost_to(start: str, end: str, monkey: bool = False, points: int = 20) -> int | None:
    tree = B.reachable(sq(start), points, monkey, door_open=False)
    return tree[sq(end)][0] if sq(end) in tree else None


def test_orthogonal_movement_and_elevation_cost():
    # g8 (lower floor) to g11 (upper floor) is three squares, crossing the edge once: 3 + 2.
    assert B.level(sq("g9")) == 0 and B.level(sq("g10")) == 1
    assert cost_to("g8", "g11") == 5
    assert cost_to("g8", "g11", monkey=True) == 3
    # Diagonal steps do not exist: g8 to h9 is two orthogonal steps.
    assert cost_to("g8", "h9") == 2
    # Walls are never crossed: the kitchen and servants' quarters are joined only through the work area.
    assert cost_to("b2", "j2") == cost_to("b2", "e4") + cost_to("e4", "j2")


def test_equipment_and_closed_front_door_cannot_be_entered():
    assert B.cells[sq("c15")].kind == "equipment"
    assert sq("c15") not in B.reachable(sq("b15"), 5, False, False)
    assert sq("o1") not in B.reachable(sq("o2"), 5, False, door_open=False)
    assert sq("o1") in B.reachable(sq("o2"), 5, False, door_open=True)


def test_line_of_sight_open_room_and_around_a_corner():
    assert B.line_of_sight(sq("b2"), sq("e5"))          # across the kitchen
    assert not B.line_of_sight(sq("n7"), sq("n9"))      # through the hall's north wall
    # Round the corner of the hall's doorway: straight through the door is clear, a slant into the wall is not.
    assert B.line_of_sight(sq("o7"), sq("o9"))
    assert not B.line_of_sight(sq("m7"), sq("o9"))
    # Symmetric.
    for a, b in (("b2", "e5"), ("m7", "o9"), ("g2", "h17")):
        assert B.line_of_sight(sq(a), sq(b)) == B.line_of_sight(sq(b), sq(a))


def test_line_of_sight_grazes_a_single_corner_but_not_a_diagonal_gap():
    # e3 -> f4 (the kitchen's door) passes exactly over the corner of one wall square (f3): clear.
    assert B.cells[sq("f3")].kind == "wall" and B.cells[sq("e4")].kind == "floor"
    assert B.line_of_sight(sq("e3"), sq("f4"))
    # Two walls meeting corner to corner close the gap between them (a variant kitchen with d2 and e3 walled).
    text = _text("map.txt").replace("#kkkk#ww#qqq#fff#ggg#tttt#", "#kk#k#ww#qqq#fff#ggg#tttt#", 1)
    text = text.replace("#k@kk#", "#k@k##", 1)
    from engine.kf2100.board import board_of

    variant = board_of(load_rulebook({"map.txt": text}))
    vs = variant.square
    assert not variant.line_of_sight(vs("e2"), vs("d3"))
    assert variant.line_of_sight(vs("c2"), vs("d3"))  # only d2 at that corner: grazing


def test_missile_ranges():
    rng = dict(rng_orth=2, rng_diag=1, unlimited=False)
    assert B.in_missile_range(sq("b2"), sq("b4"), **rng)        # 2 orthogonal
    assert not B.in_missile_range(sq("b2"), sq("b5"), **rng)    # 3 orthogonal
    assert B.in_missile_range(sq("b2"), sq("c3"), **rng)        # 1 diagonal
    assert not B.in_missile_range(sq("b2"), sq("d4"), **rng)    # 2 diagonal
    assert not B.in_missile_range(sq("b2"), sq("c4"), **rng)    # a knight's move
    # The Constabulary shoot any distance, but never through walls.
    assert B.in_missile_range(sq("j7"), sq("y7"), 2, 1, True)
    assert not B.in_missile_range(sq("n7"), sq("n10"), 2, 1, True)
