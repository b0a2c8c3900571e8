"""Exported notebooks: valid nbformat v4, a markdown cell (name, narration, note, formula) and a code cell per
step holding the script's own statement, the checks last. Their code cells, run in order by a clean
interpreter in the notebook's folder (as Jupyter would), pass their checks. Without nbformat: a one-line
error naming the extra to install, and nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import explain
from explain.core.errors import ExplainError
from explain.export import export_source, write_export
from explain.export.layout import statement
from explain.export.plan import build

nbformat = pytest.importorskip("nbformat")


def run_cells(nb_path: Path) -> subprocess.CompletedProcess:
    nb = nbformat.read(nb_path, as_version=4)
    code = "\n\n".join(c.source for c in nb.cells if c.cell_type == "code")
    script = nb_path.with_name(nb_path.stem + "_cells.py")
    script.write_text(code)
    # the working folder is the notebook's, where Jupyter runs it; the sidecar is loaded from there
    return subprocess.run([sys.executable, "-I", script.name], cwd=nb_path.parent, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("model, options, sidecar", [("causal", {}, False), ("gpt", {}, True),
                                                     ("transformer", {"n_layers": 1}, True)])
def test_notebook_runs_and_checks_itself(model: str, options: dict, sidecar: bool, tmp_path: Path) -> None:
    trace = explain.run(model, **options)
    path = write_export(trace, tmp_path / f"{model}.ipynb", fmt="ipynb")
    assert path.with_suffix(".npz").exists() == sidecar
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    proc = run_cells(path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    n = len([s for s in trace if s.op != "input"])
    assert f"ok: {n} steps match the recorded values" in proc.stdout


def test_notebook_cells_follow_the_steps(tmp_path: Path) -> None:
    trace = explain.run("gpt", random_weights=True)
    names = trace.names()
    steps = names[names.index("blocks.0.attn.q"): names.index("blocks.0.attn_out") + 1]
    narration = {"blocks.0.attn.scores": "Each **query** meets each key."}
    path = write_export(trace, tmp_path / "attn.ipynb", steps=steps, fmt="ipynb", narration=narration)
    nb = nbformat.read(path, as_version=4)
    md = [c.source for c in nb.cells if c.cell_type == "markdown"]
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert md[0].startswith("# The steps blocks.0.attn.q … blocks.0.attn_out (10 steps) of a gpt run")
    scores = next(m for m in md if m.startswith("### `blocks.0.attn.scores`"))
    assert "Each **query** meets each key." in scores
    assert trace["blocks.0.attn.scores"].note in scores and "`S = Q·Kᵀ`" in scores
    assert "(1, 2, 4, 4) · (1, 2, 4, 4) → (1, 2, 4, 4)" in scores
    # one code cell per step, holding the script's statement for it, ending by showing the value
    script, _ = export_source(trace, steps=steps, narration=narration)
    export = build(trace, steps)
    step_cells = code[1:-1]
    assert len(step_cells) == len(export.steps)
    for cell, step_code in zip(step_cells, export.steps):
        if step_code.expr is None:
            continue
        code_text = "\n".join(statement(step_code.var, step_code.expr))
        assert code_text in cell and code_text in script
        assert cell.splitlines()[-1] == step_code.var
    assert "np.testing.assert_allclose" in code[-1]
    assert md[-1].startswith("## Check")
    proc = run_cells(path)
    assert proc.returncode == 0 and "ok: 10 steps" in proc.stdout, proc.stderr[-2000:]


def test_without_nbformat_a_one_line_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nbformat", None)  # import nbformat now raises ImportError
    with pytest.raises(ExplainError) as err:
        write_export(explain.run("gpt", random_weights=True), tmp_path / "x.ipynb", fmt="ipynb")
    msg = str(err.value)
    assert "pip install '.[notebook]'" in msg and "\n" not in msg
    assert list(tmp_path.iterdir()) == []
