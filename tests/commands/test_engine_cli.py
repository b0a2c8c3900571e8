"""`explain run` and `explain params` from the command line: output formats, and every kind of bad input
giving one line `Error: …` with exit code 2 (usage) or 1 (domain), never a traceback, nothing overwritten."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from clitools import invoke, one_line_error

from explain.cli import main


def test_plain_prints_every_step() -> None:
    r = invoke("run", "gpt", "--plain")
    assert r.exit_code == 0
    for name in ("embed", "blocks.0.attn.scores", "blocks.1.resid_post", "logits", "loss"):
        assert name in r.output
    assert "(1, 4, 8) · (8, 45)" in r.output or "logits" in r.output


def test_plain_windows_big_tensors() -> None:
    r = invoke("run", "gpt", "--plain", "--vocab", "500")
    assert r.exit_code == 0
    assert "…" in r.output and "499" in r.output  # the last vocabulary column is shown after the elision


def test_json_is_one_document_with_every_step() -> None:
    r = invoke("run", "causal", "--json")
    doc = json.loads(r.output)
    assert doc["config"]["model"] == "causal"
    names = [s["name"] for s in doc["steps"]]
    assert names[:2] == ["tokens", "embed"] and "attn.masked" in names
    masked = next(s for s in doc["steps"] if s["name"] == "attn.masked")
    assert masked["values"][0][1] == "-inf" and masked["shape"] == [6, 6]
    assert masked["formula"].startswith("Sₘ = S'")


def test_params_round_trip(tmp_path) -> None:
    path = tmp_path / "w.npz"
    assert invoke("params", "attention", "-o", str(path)).exit_code == 0
    with np.load(path) as z:
        assert set(z.files) == {"attn.W_Q", "attn.b_Q", "attn.W_K", "attn.b_K", "attn.W_V", "attn.b_V", "W_E"}
    a = json.loads(invoke("run", "attention", "--json").output)
    b = json.loads(invoke("run", "attention", "--weights", str(path), "--json", "--seed", "9").output)
    assert a["steps"][-1]["values"] == b["steps"][-1]["values"]  # the file's weights, not seed 9's


def test_params_never_overwrites_without_force(tmp_path) -> None:
    path = tmp_path / "w.npz"
    path.write_bytes(b"precious")
    one_line_error(invoke("params", "attention", "-o", str(path)), 2, "exists", "--force")
    assert path.read_bytes() == b"precious"


@pytest.mark.parametrize("args,code,needles", [
    (["run", "gtp", "--plain"], 2, ["unknown model 'gtp'", "did you mean 'gpt'"]),
    (["run", "multihead", "--d-model", "10", "--heads", "4", "--plain"], 2, ["not divisible by 4 heads", "--heads one of 1, 2, 5, 10"]),
    (["run", "gpt", "--text", "a b c d e f", "--context", "4", "--plain"], 1, ["6 tokens", "context is 4", "--context 6"]),
    (["run", "gpt", "--heads", "0", "--plain"], 2, ["--heads"]),
    (["run", "simple", "--normalize", "max", "--plain"], 2, ["--normalize"]),
    (["run", "attention", "--normalize", "sum", "--plain"], 2, ["'simple' model only"]),
    (["run", "gpt", "--tokens", "1,x", "--plain"], 2, ["'x' is not one"]),
    (["run", "gpt", "--tokens", "1,2", "--vocab", "2", "--plain"], 2, ["--vocab 2 cannot hold"]),
    (["run", "attention", "--target", "x", "--plain"], 2, ["'transformer' model"]),
    (["run", "gpt", "--plain", "--json"], 2, ["one of --plain and --json"]),
    (["run", "gpt", "--d-model", "768", "--heads", "12", "--layers", "12", "--vocab", "50257", "--context", "1024",
      "--tokens", ",".join(["5"] * 1024), "--d-ff", "3072", "--plain"], 1, ["needs about", "available"]),
])
def test_bad_input_is_one_line(args, code, needles, monkeypatch) -> None:
    monkeypatch.setenv("EXPLAIN_MAX_BYTES", str(4 * 2**30))  # the memory case: a 4 GiB machine
    one_line_error(invoke(*args), code, *needles)


def test_embeddings_files(tmp_path) -> None:
    X = np.arange(12, dtype=float).reshape(4, 3) / 10
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "x.json").write_text(json.dumps(X.tolist()))
    (tmp_path / "x.csv").write_text("\n".join(",".join(str(v) for v in row) for row in X))
    np.savez(tmp_path / "x.npz", embeddings=X)
    outs = []
    for name in ("x.npy", "x.json", "x.csv", "x.npz"):
        r = invoke("run", "simple", "--embeddings", str(tmp_path / name), "--json")
        assert r.exit_code == 0, r.output
        outs.append(json.loads(r.output)["steps"][-1]["values"])
    assert all(o == outs[0] for o in outs)


def test_bad_embeddings_and_weights(tmp_path) -> None:
    np.save(tmp_path / "wide.npy", np.ones((3, 5)))
    one_line_error(invoke("run", "attention", "--embeddings", str(tmp_path / "wide.npy"), "--d-model", "4", "--plain"),
                   1, "5 wide", "--d-model is 4")
    (tmp_path / "obj.npy").write_bytes(b"")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    one_line_error(invoke("run", "simple", "--embeddings", str(tmp_path / "obj.npy"), "--plain"), 1, "pickled")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    one_line_error(invoke("run", "attention", "--weights", str(tmp_path / "junk.npz"), "--plain"), 1, "cannot read weights")
    one_line_error(invoke("run", "simple", "--embeddings", str(tmp_path / "missing.npy"), "--plain"), 1, "does not exist")
    (tmp_path / "noext").write_text("1,2\n3,4\n")
    one_line_error(invoke("run", "simple", "--embeddings", str(tmp_path / "noext"), "--plain"), 1,
                   "no file extension", ".npy, .npz, .json or .csv")
    (tmp_path / "p.npz").write_bytes(pickle.dumps({"x": 1}))
    one_line_error(invoke("run", "attention", "--weights", str(tmp_path / "p.npz"), "--plain"), 1, "p.npz", "pickled")


def test_weights_with_missing_extra_misshaped_or_nan_keys(tmp_path) -> None:
    good = tmp_path / "w.npz"
    invoke("params", "attention", "-o", str(good))
    with np.load(good) as z:
        params = {k: z[k] for k in z.files}

    def write(name, **change):
        p = dict(params)
        for k, v in change.items():
            if v is None:
                p.pop(k.replace("__", "."))
            else:
                p[k.replace("__", ".")] = v
        np.savez(tmp_path / name, **p)
        return str(tmp_path / name)

    one_line_error(invoke("run", "attention", "--weights", write("m.npz", attn__W_Q=None), "--plain"), 1,
                   "no parameter 'attn.W_Q' of shape (4, 4)")
    one_line_error(invoke("run", "attention", "--weights", write("e.npz", extra=np.ones(2)), "--plain"), 1,
                   "'extra' that this model does not use")
    one_line_error(invoke("run", "attention", "--weights", write("s.npz", attn__W_K=np.ones((4, 5))), "--plain"), 1,
                   "'attn.W_K'", "(4, 5)", "needs (4, 4)")
    bad = params["attn.W_V"].copy()
    bad[0, 0] = np.nan
    one_line_error(invoke("run", "attention", "--weights", write("n.npz", attn__W_V=bad), "--plain"), 1,
                   "'attn.W_V'", "NaN")


def test_help_on_every_command() -> None:
    from explain.cli import COMMANDS

    for name in COMMANDS:
        cmd = main.get_command(None, name)
        if cmd is None:
            continue  # a command whose module has not landed
        r = invoke(name, "--help")
        assert r.exit_code == 0 and "Example" in r.output, name
    assert invoke("--version").output.startswith("explain, version")
