"""Exported scripts, run for real: each is written to a temporary folder and run by a clean interpreter
(``python -I``, with ``explain`` made unimportable where scripts are batched) that has nothing but numpy, and
its own checks against the recorded values must pass. Whole runs of every model at a size written as literals
and at a size that needs the sidecar; ranges and single steps that start from recorded values; every step of
every model on its own. Plus: a tampered value makes the script fail, the golden script is stable text for
text, and the generated code is clean under ruff.

Regenerate the golden file after an intended change: ``EXPLAIN_REGEN_GOLDEN=1 pytest tests/export/test_export_scripts.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scripts import imported_modules, passed, run_batch, run_script

import explain
from explain.export import export_source, write_export
from explain.export.plan import build
from explain.export.values import WIDTH

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "export" / "golden_causal.py"
MODELS = ["simple", "attention", "causal", "multihead", "synthesizer", "encoder", "transformer", "gpt"]

# Options small enough for every value to be a literal, and big enough to need the sidecar.
SMALL = {
    "simple": {}, "attention": {}, "causal": {}, "multihead": {}, "synthesizer": {},
    "encoder": {"d_model": 4, "n_heads": 1, "n_layers": 1, "text": "Thinking"},
    "transformer": {"d_model": 2, "n_heads": 1, "n_layers": 1, "d_ff": 2, "text": "Thinking", "target": "Denkende"},
    "gpt": {"d_model": 4, "n_heads": 1, "n_layers": 1, "d_ff": 4, "text": "the cat"},
}
BIG = {m: {"d_model": 32} if m in ("simple", "attention", "causal") else {"d_model": 16, "n_heads": 2}
       for m in MODELS}
BIG["simple"] = {"d_model": 64}
BIG["gpt"] = {"text": ["the cat is happy", "a dog sat on"]}  # a batch of two, default sizes

@pytest.mark.parametrize("model", MODELS)
def test_whole_run_as_literals(model: str, tmp_path: Path) -> None:
    trace = explain.run(model, **SMALL[model])
    path = write_export(trace, tmp_path / f"{model}.py")
    assert not path.with_suffix(".npz").exists()  # small: every value is in the script
    text = path.read_text()
    assert imported_modules(text) == {"numpy"}
    for name in (trace[1].name, trace[-1].name):
        assert f"# {name}  " in text  # each step's name (and shape) as a comment above it
    passed(run_script(path, tmp_path), len([s for s in trace if s.op != "input"]))


@pytest.mark.parametrize("model", MODELS)
def test_whole_run_with_sidecar_from_another_folder(model: str, tmp_path: Path) -> None:
    trace = explain.run(model, **BIG[model])
    (tmp_path / "out").mkdir()
    path = write_export(trace, tmp_path / "out" / f"{model}.py")
    sidecar = path.with_suffix(".npz")
    assert sidecar.exists()
    assert imported_modules(path.read_text()) == {"numpy", "pathlib"}
    with np.load(sidecar, allow_pickle=False) as data:  # named by trace names, plain arrays
        assert set(trace.params) <= set(data.files)
        assert trace[-1].name in data.files
    # run from another folder: the script finds its sidecar beside itself, not in the working directory
    passed(run_script(path, tmp_path), len([s for s in trace if s.op != "input"]))


RANGES = [
    ("gpt", {}, "blocks.0.attn.q", "blocks.0.attn_out"),
    ("gpt", {"d_model": 16, "n_heads": 4}, "blocks.1.ln1", "blocks.1.resid_post"),  # needs the sidecar
    ("gpt", {}, "ln_final", "loss"),  # reads the targets input step from before the range
    ("transformer", {}, "decoder.blocks.0.cross_attn.q", "decoder.blocks.0.ln2"),
    ("synthesizer", {}, "attn.scores", "attn.z"),
    ("encoder", {}, "blocks.1.attn.scores", "blocks.1.attn.pattern"),
    # backward ranges: from the loss's seed to the first attention pattern's gradient, and down to W_E
    ("gpt", {"backward": True}, "loss.grad", "blocks.1.attn.pattern.grad"),
    ("gpt", {"backward": True, "d_model": 16, "n_heads": 4}, "blocks.0.attn.pattern.grad", "W_E.grad"),
    ("causal", {"backward": True}, "loss", "attn.q.grad"),
    ("gpt", {"lr": 0.1}, "W_E.grad", "W_pos.updated"),
]


@pytest.mark.parametrize("model, options, first, last", RANGES)
def test_range_runs_without_the_earlier_steps(model: str, options: dict, first: str, last: str,
                                              tmp_path: Path) -> None:
    trace = explain.run(model, **options)
    names = trace.names()
    steps = names[names.index(first): names.index(last) + 1]
    path = write_export(trace, tmp_path / "range.py", steps=steps)
    text = path.read_text()
    export = build(trace, steps)
    before = [n for n in names[: names.index(first)] if trace[n].op != "input"]
    for earlier in before:  # no earlier step is computed: those read come in as recorded values
        assert f"\n{export_var(trace, earlier)} = " not in text or any(
            g.name == earlier and g.kind == "recorded" for c in export.steps for g in c.given)
    assert any(g.kind == "recorded" for c in export.steps for g in c.given)
    passed(run_script(path, tmp_path), len(export.checked))


def export_var(trace, name: str) -> str:
    from explain.export.plan import var_names

    return var_names(trace)[name]


def test_every_step_of_every_model_exports_on_its_own(tmp_path: Path) -> None:
    paths, n = [], 0
    for model in MODELS:
        trace = explain.run(model)
        for step in trace:
            path = tmp_path / f"{model}_{step.index}.py"
            text, arrays = export_source(trace, steps=[step.name], sidecar_name=path.with_suffix(".npz").name)
            path.write_text(text)
            if arrays:
                np.savez(path.with_suffix(".npz"), **arrays)
            paths.append(path)
            n += step.op != "input"
    proc = run_batch(paths, tmp_path)
    assert proc.returncode == 0, proc.stdout[-500:] + proc.stderr[-3000:]
    assert proc.stdout.count("ok: ") == n


def test_given_embeddings_are_literals_and_ranges_read_them(tmp_path: Path) -> None:
    emb = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.0, 1.0, 1.0]])
    trace = explain.run("simple", embeddings=emb, text="Your journey starts")
    whole = write_export(trace, tmp_path / "whole.py")
    assert "embed = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.0, 1.0, 1.0]])" in whole.read_text()
    part = write_export(trace, tmp_path / "part.py", steps=["attn.z"])  # reads the given embed and the pattern
    assert "embed = np.array(" in part.read_text()
    proc = run_batch([whole, part], tmp_path)
    assert proc.returncode == 0 and proc.stdout.count("ok: ") == 2, proc.stderr[-2000:]


def test_a_tampered_value_fails_the_check(tmp_path: Path) -> None:
    trace = explain.run("gpt")
    path = write_export(trace, tmp_path / "gpt.py")
    sidecar = path.with_suffix(".npz")
    with np.load(sidecar) as data:
        arrays = dict(data)
    arrays["blocks.1.attn.pattern"] = arrays["blocks.1.attn.pattern"].copy()
    arrays["blocks.1.attn.pattern"][0, 1, 3, 0] += 1e-6  # one recorded weight, slightly off
    np.savez(sidecar, **arrays)
    proc = run_script(path, tmp_path)
    assert proc.returncode != 0 and "blocks.1.attn.pattern" in proc.stderr and "ok:" not in proc.stdout

    small = write_export(explain.run("attention"), tmp_path / "attention.py")
    text = small.read_text()
    start = text.index("attn_W_Q = np.array(")
    digit = text.index("0.", start) + 2  # the first weight of W_Q: change one of its digits
    tampered = text[:digit] + ("1" if text[digit] != "1" else "2") + text[digit + 1:]
    small.write_text(tampered)
    proc = run_script(small, tmp_path)
    assert proc.returncode != 0 and "AssertionError" in proc.stderr


def test_narration_and_notes_are_comments(tmp_path: Path) -> None:
    trace = explain.run("causal")
    text, arrays = export_source(trace, steps=["attn.masked", "attn.pattern"],
                                 narration={"attn.masked": "Now we hide the future.\nLine two\r\nprint('x')"})
    assert not arrays
    assert "# Now we hide the future." in text and "# print('x')" in text  # a newline cannot escape a comment
    assert "# Sₘ = S' + M,  M[i, j] = −inf if j > i else 0" in text
    compile(text, "x.py", "exec")
    path = tmp_path / "n.py"
    path.write_text(text)
    passed(run_script(path, tmp_path), 2)


def golden_text() -> str:
    trace = explain.run("causal", d_model=2, text="Your journey starts")
    names = trace.names()
    steps = names[names.index("attn.scores"): names.index("attn.z") + 1]
    text, arrays = export_source(trace, steps=steps, sidecar_name="golden_causal.npz")
    assert not arrays
    return text


def test_golden_script_text_for_text(tmp_path: Path) -> None:
    text = golden_text()
    if os.environ.get("EXPLAIN_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text)
    assert GOLDEN.read_text() == text, "regenerate with EXPLAIN_REGEN_GOLDEN=1 if the change is intended"
    copy = tmp_path / GOLDEN.name
    shutil.copy(GOLDEN, copy)
    passed(run_script(copy, tmp_path), 5)


def ruff_command() -> list[str]:
    local = Path(sys.executable).parent / "ruff"
    if local.exists():
        return [str(local)]
    found = shutil.which("ruff")
    if found:
        return [found]
    pytest.importorskip("ruff")
    return [sys.executable, "-m", "ruff"]


def test_generated_code_is_clean(tmp_path: Path) -> None:
    paths = []
    for model in MODELS:
        for size, options in (("small", SMALL[model]), ("big", BIG[model])):
            paths.append(write_export(explain.run(model, **options), tmp_path / f"{model}_{size}.py"))
    trace = explain.run("gpt")
    names = trace.names()
    paths.append(write_export(trace, tmp_path / "range.py", steps=names[5:15]))
    paths.append(write_export(trace, tmp_path / "one.py", steps=["blocks.0.attn.scores"]))
    paths.append(GOLDEN)
    # --isolated: the generated file alone, with ruff's defaults (88 columns), as a learner would run it; the
    # helpers copied verbatim from explain/kernels.py are wrapped at 88 for this reason.
    proc = subprocess.run([*ruff_command(), "check", "--isolated", "--select", "F,E", "--no-cache",
                           *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # every line the exporter itself writes fits the usual 88 columns
    for path in paths:
        text = path.read_text()
        for src in build_helpers(text):
            text = text.replace(src, "")
        long = [ln for ln in text.splitlines() if len(ln) > WIDTH]
        assert not long, (path.name, long[:3])


def build_helpers(text: str) -> list[str]:
    """The helper functions' source blocks in a script (copied from the kernels, not written by the exporter)."""
    import inspect

    from explain.ops import kernels

    return [inspect.getsource(getattr(kernels, name)).rstrip() for name in dir(kernels)
            if inspect.isfunction(getattr(kernels, name)) and f"\ndef {name}(" in text]
