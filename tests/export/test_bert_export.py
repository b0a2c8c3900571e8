"""A bert run exported as a script needs numpy alone: the kernels' erf (numpy has none), the GELU on it, mean
pooling, the norm, the word-pair parts and their ranking are copied in, and the script, run with ``explain``
unimportable, reproduces every recorded step (the forward of a padded batch of three, and the backward from
1 − cos with every gradient)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts import imported_modules, passed, run_batch

import explain
from explain.export import write_export


@pytest.mark.parametrize("options", [{"text": ["a man is eating food", "a man eats", "the girl"]},
                                     {"backward": True, "n_layers": 1}], ids=["padded", "backward"])
def test_the_exported_script_is_numpy_alone_and_reproduces_the_run(options: dict, tmp_path: Path) -> None:
    trace = explain.run("bert", **options)
    path = write_export(trace, tmp_path / "bert.py")
    text = path.read_text()
    assert imported_modules(text) <= {"numpy", "pathlib"}
    for kernel in ("def erf(", "def gelu_erf(", "def mean_pool(", "def l2_normalize(", "def pair_parts(",
                   "def ranked("):
        assert kernel in text, kernel
    if options.get("backward"):
        assert "def gelu_erf_backward(" in text and "def mean_pool_backward(" in text
    passed(run_batch([path], tmp_path), len([s for s in trace if s.op != "input"]))
