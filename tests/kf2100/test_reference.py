"""The rules at hand: the CRT of the reference panel is the data file's, read as a d6 at or under each number."""

from __future__ import annotations

import csv
import re
from fractions import Fraction
from pathlib import Path

import engine.kf2100
from apps.kf2100 import reference


def test_the_reference_crt_is_the_data_files_table_as_exact_d6_chances():
    rows = list(csv.DictReader((Path(engine.kf2100.__file__).parent / "data" / "crt.csv").open()))
    shown = reference.crt_html()
    cells = re.findall(r"<tr><th>[^<]*</th>((?:<td>[^<]*</td>)+)</tr>", shown)
    assert len(cells) == len(rows)
    for row, html_row in zip(rows, cells, strict=True):
        values = re.findall(r"<td>([^<]*)</td>", html_row)
        expected = [Fraction(max(0, min(6, int(row[c]))), 6) for c in ("fist", "kick", "mist", "monkey", "weapon",
                                                                        "none")]
        assert [Fraction(v) for v in values] == expected, row["attack"]


def test_the_combat_boxs_crt_outlines_the_cells_in_play_with_the_data_files_chances():
    """The combat box's CRT (a table of text): every cell the data file's chance, the outlined ones those given,
    counted as crt_target counts them (x: the answer's column, y: the attack's row from the bottom)."""
    rows = list(csv.DictReader((Path(engine.kf2100.__file__).parent / "data" / "crt.csv").open()))
    columns = ("fist", "kick", "mist", "monkey", "weapon", "none")
    kick = next(i for i, r in enumerate(rows) if r["attack"] == "kick")
    y = len(rows) - 1 - kick
    shown = reference.crt_heat_html([(x, y) for x in range(6)] + [(5, 0)])
    body = re.findall(r"<tr><th>[^<]*</th>((?:<td[^>]*>[^<]*</td>)+)</tr>", shown)
    assert len(body) == len(rows)
    for i, (row, html_row) in enumerate(zip(rows, body, strict=True)):
        cells = re.findall(r"<td( class='([^']*)')?[^>]*>([^<]*)</td>", html_row)
        assert [Fraction(text) for _, _, text in cells] == [Fraction(max(0, min(6, int(row[c]))), 6) for c in columns]
        outlined = [x for x, (_, classes, _) in enumerate(cells) if "outlined" in classes.split()]
        assert outlined == (list(range(6)) if i == kick else [5] if i == len(rows) - 1 else []), row["attack"]
    assert reference.heat(0.0) == "#ffffcc" and reference.heat(1.0) == "#bd0026"
    assert reference.crt_heat_html([]).count("outlined") == 0


def test_the_victory_conditions_follow_the_scenario():
    assert "Terminator total victory" in reference.victory_markdown("basic")
    solo = reference.victory_markdown("solo")
    assert "Most points wins" in solo and "12 turns" in solo
    assert "whoever answered" in reference.RULES
