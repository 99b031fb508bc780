"""Build the static site of the teaching notebooks (``make docs``): each notebook executed and exported to one
self-contained HTML page, and an index page linking them, for a teacher to open without Jupyter or a network.

Everything a page needs is inside it: BokehJS, Panel and HoloViews come inline (the notebooks call
``hv.extension("bokeh", inline=True)`` and ``pn.extension(inline=True)``), images are embedded, and the LaTeX of
the Markdown cells and of the exercises' derivations is converted to MathML here with ``latex2mathml`` (which
the browser draws natively), so the page template (``site_template/``) loads no MathJax, require.js or Mermaid.

    .venv/bin/python notebooks/build_site.py --out build/docs [NOTEBOOK ...]
"""

from __future__ import annotations

import argparse
import html
import json
import re
import time
from pathlib import Path

import nbformat
from latex2mathml.converter import convert
from nbclient import NotebookClient
from nbconvert import HTMLExporter

FOLDER = Path(__file__).resolve().parent
TEMPLATE = FOLDER / "site_template"
DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$", re.S)
CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
TOKEN = re.compile(r"@@MATH(\d+)@@")
EXEC_MIME = "application/vnd.holoviews_exec.v0+json"  # the output of every Panel or HoloViews display


def mathml(text: str, formulas: list[str]) -> str:
    """``text`` with every ``$$...$$`` and ``$...$`` outside code spans replaced by a token ``@@MATHn@@``; the
    formula's MathML is appended to ``formulas`` (nbconvert's Markdown renderer would take MathML apart, so it
    goes into the page only after export, by :func:`put_back`)."""
    def token(latex: str, display: str) -> str:
        formulas.append(convert(latex.strip(), display=display))
        return f"@@MATH{len(formulas) - 1}@@"

    def one(part: str) -> str:
        part = DISPLAY.sub(lambda m: token(m.group(1), "block"), part)
        return INLINE.sub(lambda m: token(m.group(1), "inline"), part)

    return "".join(p if i % 2 else one(p) for i, p in enumerate(CODE.split(text)))


def with_mathml(nb: nbformat.NotebookNode) -> list[str]:
    """Tokenize the math of Markdown cells and of HTML outputs (the exercises' derivations) in place; the
    formulas' MathML, in token order."""
    formulas: list[str] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = mathml(cell.source, formulas)
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data and "exercise-check" in data["text/html"]:
                data["text/html"] = mathml(data["text/html"], formulas)
    return formulas


def put_back(page: str, formulas: list[str]) -> str:
    """The exported page with each ``@@MATHn@@`` token replaced by its MathML; a token lost is an error."""
    missing = [n for n in range(len(formulas)) if f"@@MATH{n}@@" not in page]
    if missing:
        raise ValueError(f"the export lost {len(missing)} formula(s), e.g. {formulas[missing[0]][:80]}")
    return TOKEN.sub(lambda m: formulas[int(m.group(1))], page)


def title_and_summary(nb: nbformat.NotebookNode) -> tuple[str, str]:
    """The first heading and the first paragraph after it, as plain text."""
    first = next(c for c in nb.cells if c.cell_type == "markdown").source.strip().split("\n\n")
    return first[0].lstrip("# ").strip(), " ".join(first[1].split()) if len(first) > 1 else ""


def build(notebook: Path, out: Path) -> tuple[str, str, float, list[str]]:
    """Execute ``notebook`` in its own folder and write ``out/<name>.html``: (title, summary, seconds, the ids
    of the Bokeh roots its outputs display)."""
    nb = nbformat.read(notebook, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}}
                   ).execute()
    seconds = time.perf_counter() - start
    title, summary = title_and_summary(nb)
    roots = [o["metadata"][EXEC_MIME]["id"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if EXEC_MIME in o.get("metadata", {})]
    formulas = with_mathml(nb)
    nb.metadata["title"] = title
    exporter = HTMLExporter(template_name=TEMPLATE.name, extra_template_basedirs=[str(FOLDER)], embed_images=True)
    body, _ = exporter.from_notebook_node(nb)
    (out / f"{notebook.stem}.html").write_text(put_back(body, formulas), encoding="utf-8")
    return title, summary, seconds, roots


def index(pages: list[dict[str, object]]) -> str:
    items = "\n".join(f'<li><a href="{html.escape(str(p["page"]))}">{html.escape(str(p["title"]))}</a>'
                      f'<p>{html.escape(str(p["summary"]))}</p></li>' for p in pages)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Tabletop Dojo: the teaching notebooks</title>
<style>body {{ font-family: sans-serif; max-width: 860px; margin: 2em auto; line-height: 1.5 }}
li {{ margin-bottom: 1em }} a {{ font-size: 1.15em }}</style></head>
<body><h1>Tabletop Dojo: the teaching notebooks</h1>
<p>Each page is a notebook as it ran, with its plots: exact odds of three tabletop games, checked against
independent derivations, and Monte Carlo estimates with their intervals. The pages work offline. To change a
number or try an exercise, open the notebook itself in JupyterLab (<code>make lab</code>).</p>
<ol>
{items}
</ol></body></html>
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("build/docs"))
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in notebooks/")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pages = []
    for notebook in [p.resolve() for p in args.notebooks] or sorted(FOLDER.glob("*.ipynb")):
        title, summary, seconds, roots = build(notebook, args.out)
        print(f"{notebook.name}: executed in {seconds:.0f} s -> {args.out / (notebook.stem + '.html')}", flush=True)
        pages.append({"page": f"{notebook.stem}.html", "title": title, "summary": summary,
                      "seconds": round(seconds, 1), "roots": roots})
    (args.out / "index.html").write_text(index(pages), encoding="utf-8")
    # What each page shows (its Bokeh roots), for the browser test that opens the site offline.
    (args.out / "pages.json").write_text(json.dumps(pages, indent=1), encoding="utf-8")
    print(f"index: {args.out / 'index.html'}")


if __name__ == "__main__":
    main()
