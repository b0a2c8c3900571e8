"""Tutorial 17's words against numpy: the LayerNorm it sets beside RMSNorm, of token 3's row of its own W_E
(session 9: the narration subtracted a mean of 1.5 where the row's mean is 14 / 8 = 1.75, and gave
0.8320, 1.3867, −0.8320 for 0.7001, 1.2603, −0.9802). The steps explain records are checked by the tutorial's
own expectations; this checks the arithmetic it only narrates."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np

TUTORIAL = Path(__file__).resolve().parents[2] / "tutorials" / "17-the-llama-block.toml"


def test_the_layernorm_beside_rmsnorm_is_numpys() -> None:
    doc = tomllib.loads(TUTORIAL.read_text())
    row = np.array(doc["weights"]["W_E"]["values"][3], dtype=float)  # token 3
    text = " ".join(next(s for s in doc["stops"] if s["step"] == "blocks.0.ln1")["narration"].split())
    mean, std, values = re.search(r"LayerNorm would first subtract the mean \(14 / 8 = ([\d.]+)\) and divide by the "
                                  r"standard deviation \(√[\d.]+ = ([\d.]+)\), giving \(([^)]*)\)", text).groups()
    said = np.array([float(v.replace("−", "-")) for v in values.split(", ")])
    # the narration's 4 decimals: within 5e-5 of numpy's LayerNorm (population variance, ε = 1e-5 inside the root)
    np.testing.assert_allclose(float(mean), row.mean(), atol=5e-5)
    np.testing.assert_allclose(float(std), row.std(), atol=5e-5)
    np.testing.assert_allclose(said, (row - row.mean()) / np.sqrt(row.var() + 1e-5), atol=5e-5)
