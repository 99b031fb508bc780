"""The "predict, then check" exercises of the teaching notebooks.

Each exercise is two tagged cells. The answer cell (tag ``exercise-answer``) holds one assignment,
``answer = ...``, which the student replaces with a prediction; its cell metadata ``exercise`` names the
exercise and gives a model answer and a wrong one (``{"name": ..., "model": "...", "wrong": "..."}``, Python
expressions), so ``tests/notebooks/test_exercises.py`` can run every check with both. The check cell (tag
``exercise-check``) computes the value itself, from the engine or by counting, calls :func:`check` and so
needs nothing from the notebook but its first (import) cell: the test runs it on its own.

A check never raises on a wrong answer (a class would lose the rest of the notebook); it says right or wrong
and shows the derivation in a collapsed ``<details>`` section. ``RESULTS`` records each verdict for the test.
"""

from __future__ import annotations

import html
import math
from fractions import Fraction
from typing import Any

from IPython.display import HTML, display

RESULTS: dict[str, bool | None] = {}
"""Each exercise's last verdict: True right, False wrong, None not answered yet."""


def _close(answer: Any, exact: Any, tolerance: float) -> bool:
    if isinstance(exact, str):
        return isinstance(answer, str) and answer.strip().lower() == exact.strip().lower()
    if isinstance(exact, tuple | list):
        return (isinstance(answer, tuple | list) and len(answer) == len(exact)
                and all(_close(a, e, tolerance) for a, e in zip(answer, exact, strict=True)))
    if isinstance(answer, bool) or not isinstance(answer, int | float | Fraction):
        return False
    if tolerance == 0:
        return Fraction(answer) == Fraction(exact) if not isinstance(answer, float) else answer == float(exact)
    return math.isclose(float(answer), float(exact), abs_tol=tolerance)


def check(name: str, answer: Any, exact: Any, derivation: str, tolerance: float = 0.0) -> bool | None:
    """Say whether ``answer`` is ``exact`` (within ``tolerance`` for a number; 0: the same rational), show the
    ``derivation`` (HTML, may hold LaTeX for MathJax) collapsed, and record the verdict under ``name``."""
    shown = f"{exact} = {float(exact):.4f}" if isinstance(exact, Fraction) else html.escape(str(exact))
    body = (f"<details><summary>Show the derivation</summary>{derivation}"
            f"<p>Answer: <b>{shown}</b></p></details>")
    if answer is Ellipsis:
        verdict = None
        text = "Write your prediction in the cell above (replace the <code>...</code>), then run this cell."
    elif _close(answer, exact, tolerance):
        verdict, text = True, f"&#10004; Right: {html.escape(str(answer))}."
    else:
        within = f" (within {tolerance})" if tolerance else ""
        verdict = False
        text = f"&#10008; Not quite{within}: you wrote {html.escape(str(answer))}. Think again, or open the derivation."
    colour = {True: "#1b7f3b", False: "#b3261e", None: "#555"}[verdict]
    display(HTML(f'<div class="exercise-check" data-verdict="{verdict}" style="border-left: 4px solid {colour}; '
                 f'padding: 4px 10px; margin: 4px 0"><p style="color: {colour}">{text}</p>{body}</div>'))
    RESULTS[name] = verdict
    return verdict
