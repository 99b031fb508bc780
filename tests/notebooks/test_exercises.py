"""Every "predict, then check" exercise of the teaching notebooks says right to its model answer, wrong to a
wrong one and "not answered" to the blank answer cell.

An exercise is an answer cell tagged ``exercise-answer`` (its metadata ``exercise`` gives the name, a model and a
wrong answer as Python expressions) followed by its check cell tagged ``exercise-check`` (see
``notebooks/exercises.py``). A check cell computes its value itself, so it runs with nothing but the notebook's
first code cell (the imports): the test builds one small notebook per teaching notebook from those cells, each
check run three times, and executes it in one kernel, in the notebooks' folder as ``make test`` does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

FOLDER = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
MARK = "EXERCISE-VERDICT "


def exercises(nb: nbformat.NotebookNode) -> list[tuple[dict[str, str], nbformat.NotebookNode]]:
    """Each exercise's metadata and its check cell, in order; the layout is checked on the way."""
    out = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        if "exercise-answer" not in cell.metadata.get("tags", []):
            continue
        meta = cell.metadata["exercise"]
        assert {"name", "model", "wrong"} <= set(meta), meta
        assert cell.source.startswith("answer = ..."), f"{meta['name']}: the answer cell must start blank"
        following = cells[i + 1]
        assert "exercise-check" in following.metadata.get("tags", []), f"{meta['name']}: no check cell after it"
        assert re.search(rf'check\("{re.escape(meta["name"])}"', following.source), meta["name"]
        out.append((meta, following))
    return out


def verdicts(notebook: Path) -> list[tuple[str, str, bool | None]]:
    """Run every check of ``notebook`` with the model, the wrong and the blank answer: (name, which, verdict)."""
    nb = nbformat.read(notebook, as_version=4)
    setup = next(c for c in nb.cells if c.cell_type == "code")
    cells = [nbformat.v4.new_code_cell(setup.source)]
    for meta, check_cell in exercises(nb):
        for which, answer in (("model", meta["model"]), ("wrong", meta["wrong"]), ("blank", "...")):
            cells.append(nbformat.v4.new_code_cell(f"answer = {answer}"))
            cells.append(nbformat.v4.new_code_cell(check_cell.source))
            cells.append(nbformat.v4.new_code_cell(
                "import json as _json, exercises as _ex\n"
                f"print({MARK!r} + _json.dumps([{meta['name']!r}, {which!r}, _ex.RESULTS.pop({meta['name']!r})]))"))
    run = nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)
    NotebookClient(run, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(FOLDER)}}).execute()
    found = []
    for cell in run.cells:
        for out in cell.get("outputs", []):
            for line in out.get("text", "").splitlines():
                if line.startswith(MARK):
                    found.append(tuple(json.loads(line[len(MARK):])))
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_check_passes_the_model_answer_and_fails_a_wrong_one(notebook):
    nb = nbformat.read(notebook, as_version=4)
    names = [meta["name"] for meta, _ in exercises(nb)]
    assert len(names) >= 3, f"{notebook.name}: {len(names)} exercises, the brief asks for a few"
    assert len(set(names)) == len(names), f"{notebook.name}: an exercise name is used twice"
    got = verdicts(notebook)
    expected = [(n, which, verdict) for n in names for which, verdict in (("model", True), ("wrong", False),
                                                                          ("blank", None))]
    assert got == expected
