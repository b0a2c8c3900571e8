"""Traces that scale: ``--save FILE.npz`` / ``.safetensors`` hold every tensor under its step name (read back
with numpy and with the safetensors package, the independent readers), and ``--json`` writes a step's values in
full up to 100,000 values, else ``"values": null`` with a note, with statistics checked against numpy."""

from __future__ import annotations

import json

import numpy as np
import pytest

import explain
from explain.core.errors import UsageError
from explain.io.save import save_trace
from explain.render.plain import JSON_VALUES, trace_json


@pytest.fixture(scope="module")
def wide():
    """A run whose logits (40 × 3,000 = 120,000 values) pass the JSON limit; everything else stays under it."""
    return explain.run("gpt", d_vocab=3000, d_model=16, n_ctx=64, tokens=",".join(str(i) for i in range(1, 41)))


def test_npz_and_safetensors_hold_every_step(wide, tmp_path) -> None:
    from safetensors.numpy import load_file

    path, n, size = save_trace(wide, str(tmp_path / "t.npz"))
    with np.load(path) as z:
        assert set(z.files) >= set(wide.names()) and len(z.files) == n
        for s in wide:
            np.testing.assert_array_equal(z[s.name], s.output)  # exact: the same bytes
            assert z[s.name].dtype == s.output.dtype
        assert sum(z[k].nbytes for k in z.files) == size
    st = load_file(str(save_trace(wide, str(tmp_path / "t.safetensors"))[0]))
    assert set(st) == set(np.load(path).files)
    for s in wide:
        np.testing.assert_array_equal(st[s.name], s.output)
    with pytest.raises(UsageError, match="exists; use --force"):
        save_trace(wide, str(tmp_path / "t.npz"))
    with pytest.raises(UsageError, match=r"\.npz or \.safetensors"):
        save_trace(wide, str(tmp_path / "t.txt"))


def test_npz_members_are_what_np_savez_writes(tmp_path) -> None:
    """The .npz writer hands zipfile each array's own memory: a transposed (Fortran-order) view, a 0-d value,
    booleans, integers and a zero-size array come back from np.load exactly, as np.savez's archive does."""
    from explain.io.save import _write_npz

    arrays = {"t": np.arange(12.0).reshape(3, 4).T, "s": np.array(2.5), "b": np.array([True, False]),
              "i": np.arange(5, dtype=np.int32), "e": np.zeros((0, 3)), "blocks.0.attn.pattern": np.eye(3)[::2]}
    with open(tmp_path / "ours.npz", "wb") as fh:
        _write_npz(arrays, fh)
    np.savez(tmp_path / "numpy.npz", **arrays)
    with np.load(tmp_path / "ours.npz") as ours, np.load(tmp_path / "numpy.npz") as ref:
        assert ours.files == ref.files
        for k in ref.files:
            assert ours[k].dtype == ref[k].dtype and ours[k].shape == ref[k].shape
            np.testing.assert_array_equal(ours[k], ref[k])


def test_json_omits_only_the_steps_past_the_limit_and_keeps_their_statistics(wide) -> None:
    doc = json.loads(trace_json(wide))
    steps = {s["name"]: s for s in doc["steps"]}
    for s in wide:
        d = steps[s.name]
        assert d["shape"] == list(s.shape) and d["formula"] == s.formula
        if s.output.size > JSON_VALUES:
            assert d["values"] is None and f"{s.output.size:,} values" in d["omitted"]
            assert f"np.load(FILE)['{s.name}']" in d["omitted"]
        else:
            assert "omitted" not in d and np.asarray(d["values"], dtype=float).shape == s.output.shape
    assert steps["logits"]["values"] is None  # 120,000 values
    x = wide["logits"].output
    st = steps["logits"]["stats"]
    np.testing.assert_allclose([st["min"], st["max"], st["mean"], st["std"]], [x.min(), x.max(), x.mean(), x.std()],
                               rtol=1e-12)
    assert st["n_inf"] == 0 and st["n_nan"] == 0
    masked = next(s for s in wide if np.isinf(s.output).any())  # the causal mask's −inf are counted, not averaged
    assert steps[masked.name]["stats"]["n_inf"] == int(np.isinf(masked.output).sum())
    assert steps[masked.name]["stats"]["min"] == float(masked.output[np.isfinite(masked.output)].min())
