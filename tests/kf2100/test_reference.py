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


def test_the_victory_conditions_follow_the_scenario():
    assert "Terminator total victory" in reference.victory_markdown("basic")
    solo = reference.victory_markdown("solo")
    assert "Most points wins" in solo and "12 turns" in solo
    assert "whoever answered" in reference.RULES
