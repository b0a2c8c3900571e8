"""The exported Jupyter notebook (``--format ipynb``): a markdown cell per step with its name, the tutorial's
narration if any, its note, formula and shapes; a code cell per step with exactly the script's statement; the
checks at the end. Written with nbformat, an optional extra (``pip install '.[notebook]'`` from the source folder, or ``pip install nbformat``).

A notebook has no ``__file__``: its sidecar is loaded by name from the working folder, which is the
notebook's own folder when Jupyter (or VS Code) runs it.
"""

from __future__ import annotations

import json
from typing import Any

from explain.core.errors import ExplainError
from explain.core.shape_rules import fmt_shape
from explain.export.plan import Export, StepCode
from explain.export.script import about, check_lines, clean, imports, step_lines

INSTALL_HINT = "pip install '.[notebook]' (in explain's source folder) or pip install nbformat"


def nbformat_module() -> Any:
    """nbformat, or a one-line error saying how to install it."""
    try:
        import nbformat  # lazy: optional dependency
    except ImportError:
        raise ExplainError(f"writing a notebook needs nbformat: {INSTALL_HINT}") from None
    return nbformat


def step_markdown(code: StepCode, narration: str | None) -> str:
    s = code.step
    parts = [f"### `{s.name}`  {fmt_shape(s.shape)}"]
    if narration:
        parts.append(clean(narration))
    if s.note:
        parts.append(clean(s.note))
    parts.append(f"`{clean(s.formula)}`" + (f"  \n`{clean(s.signature)}`" if s.op != "input" else ""))
    return "\n\n".join(parts)


def notebook(export: Export, file_name: str | None = None) -> Any:
    """The notebook of an export (an nbformat NotebookNode); ``file_name`` is the notebook's, e.g.
    ``foo.ipynb``, whose sidecar is ``foo.npz``."""
    nbf = nbformat_module()
    v4 = nbf.v4
    stem = file_name.rsplit(".", 1)[0] if file_name else "export"
    sidecar_name = f"{stem}.npz"
    intro = [f"# {export.title}", *about(export, sidecar_name, "Run all cells")]
    cells = [v4.new_markdown_cell("\n\n".join(clean(p) for p in intro if p))]
    setup = [ln for ln in imports(export) if "pathlib" not in ln and ln]
    for src in export.helper_sources():
        setup += ["", "", *src.splitlines()]
    cells.append(v4.new_code_cell("\n".join(setup)))
    if export.sidecar:
        cells.append(v4.new_markdown_cell(
            f"The values too big to write here are in `{sidecar_name}`, beside this notebook, by their names in "
            "the trace."))
        cells.append(v4.new_code_cell(f"data = np.load({json.dumps(sidecar_name)}, allow_pickle=False)"))
    for code in export.steps:
        cells.append(v4.new_markdown_cell(step_markdown(code, export.narration.get(code.step.name))))
        cells.append(v4.new_code_cell("\n".join(step_lines(code, with_comment=False) + [code.var])))
    cells.append(v4.new_markdown_cell("## Check\n\nEvery step computed above, against the value explain "
                                      "recorded for it."))
    cells.append(v4.new_code_cell("\n".join(check_lines(export))))
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb
