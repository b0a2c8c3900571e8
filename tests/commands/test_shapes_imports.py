"""``explain shapes`` must not import numpy, textual or rich: the model code runs on shapes alone.

Each case runs the real CLI in a fresh interpreter and looks at ``sys.modules`` afterwards; one case reads
``python -X importtime -m explain shapes gpt``.
"""

from __future__ import annotations

import pytest
from clitools import HEAVY, heavy_imports, importtime_packages

CASES = {
    "default": ["gpt"],
    "gpt2 size": ["gpt", "--d-model", "768", "--heads", "12", "--layers", "12", "--d-ff", "3072", "--vocab",
                  "50257", "--context", "1024", "--seq", "1024"],
    "json": ["transformer", "--json"],
    "backward": ["gpt", "--backward", "--lr", "0.1"],
    # (--weights is read since 4cd7e0d: its file's .npy headers set sizes, through numpy's header parser)
    "config error": ["gpt", "--d-model", "10", "--heads", "4"],
    "help": ["--help"],
}


@pytest.mark.parametrize("args", list(CASES.values()), ids=list(CASES))
def test_shapes_imports_no_heavy_packages(args: list[str]) -> None:
    heavy, proc = heavy_imports("shapes", *args)
    assert heavy == [], f"explain shapes imported {heavy}"
    assert "Traceback" not in proc.stderr


def test_importtime_shows_no_numpy_or_textual() -> None:
    imported, proc = importtime_packages("shapes", "gpt")
    assert proc.returncode == 0, proc.stderr
    assert "total: 107,648 parameters" in proc.stdout  # the shipped trained model, read from its folder
    assert "click" in imported and "explain" in imported  # the measurement did see the imports
    assert not imported & set(HEAVY)
