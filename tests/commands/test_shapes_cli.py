"""CLI tests for ``explain shapes``: the table against the numeric run of the same config, --json, --seq,
--match, and one-line errors with the right exit codes.

The reference for every shape and parameter count is :func:`explain.run` (numpy arrays actually computed),
so these tests check that the shape-only plan and its table say what a real run produces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import explain
from explain.checkpoints.trained import SHIPPED
from explain.cli import main
from explain.core.config import MODELS

# A step row: index, name, op, then the signature (which has spaces in it).
STEP_ROW = re.compile(r"^\s+(\d+)  (\S+)\s+(\S+)\s+(\S.*)$")
# A parameter row (indented under its layer): name, shape, count, optional note.
PARAM_ROW = re.compile(r"^    (\S+)\s+(\([\d, ]*\))\s+([\d,]+)(?:  (.*))?$")
# A layer row: name and subtotal, no shape.
LAYER_ROW = re.compile(r"^  (\S+)\s+([\d,]+)$")


def shapes(*args: str) -> Result:
    return CliRunner().invoke(main, ["shapes", *args])


def ok(*args: str) -> str:
    result = shapes(*args)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


def assert_clean_error(result: Result, code: int) -> str:
    """Exit ``code``, nothing on stdout, no traceback, and stderr is one ``Error: …`` line."""
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def sections(out: str) -> tuple[list[str], list[str]]:
    """The step rows and the parameter-table rows of the text report."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("steps ("))
    stop = next(i for i, line in enumerate(lines) if line.startswith("parameters ("))
    end = next(i for i, line in enumerate(lines) if line.startswith("total: "))
    return lines[start + 2:stop - 1], lines[stop + 2:end - 1]


SMALL = {  # a small config per model, a little off the defaults so nothing passes by accident
    "simple": [],
    "attention": ["--d-model", "6"],
    "causal": ["--text", "one two three four five"],
    "multihead": ["--heads", "3", "--d-model", "12"],
    "synthesizer": ["--d-model", "6", "--heads", "2"],
    "encoder": ["--layers", "3", "--d-ff", "10"],
    "transformer": ["--layers", "1", "--target", "a b c d"],
    "gpt": ["--layers", "3", "--d-model", "12", "--heads", "3", "--text", "a b c", "--text", "d e f"],
    "llama": ["--layers", "3", "--d-model", "16", "--heads", "4", "--kv-heads", "2", "--text", "a b c"],
    "gemma": ["--layers", "3", "--d-model", "16", "--heads", "4", "--kv-heads", "2", "--window", "2",
              "--text", "a b c d"],
    "bert": ["--layers", "3", "--d-model", "12", "--heads", "3", "--text", "a b c", "--text", "d e", "--text", "f"],
}


def run_options(args: list[str]) -> dict:
    """The same options, for explain.run."""
    names = {"--d-model": "d_model", "--heads": "n_heads", "--layers": "n_layers", "--d-ff": "d_ff", "--kv-heads": "n_kv_heads",
             "--window": "sliding_window", "--text": "text", "--target": "target"}
    out: dict = {}
    for flag, value in zip(args[::2], args[1::2]):
        key = names[flag]
        if key == "text":
            out.setdefault("text", []).append(value)
        else:
            out[key] = value if key in ("target",) else int(value)
    if len(out.get("text", [])) == 1:
        out["text"] = out["text"][0]
    return out


@pytest.mark.parametrize("model", list(MODELS))
def test_table_matches_a_real_run(model: str) -> None:
    """Every step of the numeric run is a row, in order, with its op and its own signature; every parameter
    is a row with the shape and size of the array the run used; the total is the number of values."""
    args = SMALL[model]
    out = ok(model, *args)
    trace = explain.run(model, **run_options(args))
    step_rows, param_rows = sections(out)
    parsed = [STEP_ROW.match(r).groups() for r in step_rows]
    # numbered from 1, as the TUI's "step N of M" and --plain's "N/M" count them
    assert [(int(i), n, op, sig) for i, n, op, sig in parsed] == \
        [(s.index + 1, s.name, s.op, s.signature) for s in trace]
    params = {m.group(1): m for m in map(PARAM_ROW.match, param_rows) if m}
    assert set(params) == set(trace.params)
    for name, arr in trace.params.items():
        assert params[name].group(2) == str(arr.shape)  # Python prints (8,) for a 1-tuple, like the table
        assert int(params[name].group(3).replace(",", "")) == arr.size
    layers = [LAYER_ROW.match(r) for r in param_rows if LAYER_ROW.match(r)]
    total = sum(a.size for a in trace.params.values())
    assert sum(int(m.group(2).replace(",", "")) for m in layers) == total
    assert f"total: {total:,} parameters" in out
    assert total == sum(spec.size for spec in trace.specs.values()) == trace.n_params


def test_gpt_layers_and_tied_unembedding() -> None:
    out = ok("gpt", "--random-weights")
    _, rows = sections(out)
    layer_names = [m.group(1) for m in map(LAYER_ROW.match, rows) if m]
    assert layer_names == ["embed", "pos_embed", "blocks.0.ln1", "blocks.0.attn", "blocks.0.ln2", "blocks.0.mlp",
                           "blocks.1.ln1", "blocks.1.attn", "blocks.1.ln2", "blocks.1.mlp", "ln_final"]
    w_e = next(m for m in map(PARAM_ROW.match, rows) if m and m.group(1) == "W_E")
    assert w_e.group(4) == "also read by logits (tied)"
    # d_model 8, vocab 45 (the built-in words), context 32: 360 + 256 + 2 blocks of 872 + 16 = 2,376
    assert "total: 2,376 parameters\n  = embed 360 + pos_embed 256 + blocks.0–1 2 × 872 + ln_final 16" in out


def test_header_names_only_the_dimensions_the_model_has() -> None:
    assert ok("simple").splitlines()[:2] == ["simple: d_model 4, vocab 45",
                                             "input: 6 tokens (Your journey starts with one step)"]
    assert ok("gpt", "--random-weights").splitlines()[:2] == [
        "gpt: d_model 8, 2 heads × d_head 4, d_ff 32, 2 layers, vocab 45, context 32",
        "input: batch 1 × 4 tokens (The cat is happy)"]


def test_gpt_alone_shows_the_trained_model_run_opens() -> None:
    """``explain shapes gpt`` shows the model ``explain run gpt`` opens, the shipped trained one (issue 24),
    not run's random defaults: its sizes are those of the folder's config.json, read here directly, and every
    step and parameter is the trained run's. A size option or --random-weights means random defaults."""
    config = json.loads((SHIPPED / "config.json").read_text())
    out = ok("gpt")
    assert out.splitlines()[0] == (f"gpt: d_model {config['n_embd']}, {config['n_head']} heads × d_head "
                                   f"{config['n_embd'] // config['n_head']}, d_ff {config['n_inner']}, "
                                   f"{config['n_layer']} layers, vocab {config['vocab_size']}, "
                                   f"context {config['n_positions']}")
    trace = explain.run("gpt")  # the trained model, as 'explain run gpt' opens it
    assert trace.weights == "trained: gpt-tiny"
    step_rows, param_rows = sections(out)
    assert [STEP_ROW.match(r).group(2, 4) for r in step_rows] == [(s.name, s.signature) for s in trace]
    assert f"total: {sum(a.size for a in trace.params.values()):,} parameters" in out
    assert out == ok("gpt", "--trained") == ok("gpt", "--checkpoint", str(SHIPPED))
    assert "d_model 8," in ok("gpt", "--random-weights").splitlines()[0]
    assert "d_model 16," in ok("gpt", "--d-model", "16").splitlines()[0]  # a size option: random defaults
    assert ok("gpt", "--seq", "48").splitlines()[1] == "input: batch 1 × 48 tokens"  # up to its context


def test_json_is_one_document_matching_the_run() -> None:
    result = shapes("multihead", "--heads", "4", "--d-model", "16", "--json")
    assert result.exit_code == 0 and result.stderr == ""
    doc = json.loads(result.stdout)
    trace = explain.run("multihead", n_heads=4, d_model=16)
    assert doc["config"] == trace.config.to_dict()
    assert [s["name"] for s in doc["steps"]] == trace.names()
    for s, step in zip(doc["steps"], trace):
        assert s["shape"] == list(step.output.shape)
        assert s["input_shapes"] == [list(trace.value(n).shape) for n in step.inputs]
        assert (s["op"], s["signature"], s["formula"], s["inputs"]) == \
            (step.op, step.signature, step.formula, list(step.inputs))
    assert {p["name"]: (p["shape"], p["size"]) for p in doc["params"]} == \
        {n: (list(a.shape), a.size) for n, a in trace.params.items()}
    assert doc["n_params"] == sum(p["size"] for p in doc["params"]) == sum(la["size"] for la in doc["layers"])
    assert doc["n_params"] == sum(a.size for a in trace.params.values())


def test_seq_sets_the_sequence_length() -> None:
    doc = json.loads(ok("gpt", "--random-weights", "--seq", "7", "--json"))
    steps = {s["name"]: s["shape"] for s in doc["steps"]}
    assert steps["blocks.0.attn.pattern"] == [1, 2, 7, 7]
    assert steps["logits"] == [1, 7, 45]  # same vocabulary as the default text: --seq does not grow it
    same = json.loads(ok("gpt", "--random-weights", "--tokens", ",".join(["3"] * 7), "--json"))
    assert [s["shape"] for s in same["steps"]] == [s["shape"] for s in doc["steps"]]
    assert ok("gpt", "--seq", "7").splitlines()[1] == "input: batch 1 × 7 tokens"  # no <unk> labels shown


def test_seq_one_has_no_loss() -> None:
    names = [s["name"] for s in json.loads(ok("gpt", "--seq", "1", "--json"))["steps"]]
    assert names[-1] == "log_probs" and "loss" not in names


def test_match_prefix_and_glob() -> None:
    out = ok("gpt", "--layers", "3", "--match", "blocks.1")
    steps, params = sections(out)
    assert steps and all(STEP_ROW.match(r).group(2).startswith("blocks.1.") for r in steps)
    assert all(m.group(1).startswith("blocks.1.") for m in map(PARAM_ROW.match, params) if m)
    assert "shown: 872 of the 3,248 parameters" in out
    out = ok("gpt", "--layers", "3", "--match", "blocks.*.attn.pattern", "--no-params")
    assert [STEP_ROW.match(r).group(2) for r in out.splitlines() if STEP_ROW.match(r)] == \
        [f"blocks.{i}.attn.pattern" for i in range(3)]
    assert "parameters (" not in out
    out = ok("gpt", "--match", "embed", "--no-steps")  # a parameter also matches by its layer
    assert "    W_E " in out and "W_pos" not in out and "steps (" not in out


def test_a_weights_file_sets_the_sizes_its_shapes_fix(tmp_path) -> None:
    """As 'explain run --weights' does since issue 42 item 11: shapes read the file's headers (not its data), so
    both commands agree on the sizes; before, shapes ignored the file with a note and showed the defaults."""
    w = tmp_path / "w.npz"
    assert CliRunner().invoke(main, ["params", "gpt", "-o", str(w)]).exit_code == 0  # the trained GPT's sizes
    out = ok("gpt", "--weights", str(w))
    assert out.splitlines()[0].startswith("gpt: d_model 64, 4 heads × d_head 16, d_ff 256, 2 layers, vocab 70")
    assert "(70, 64)" in out  # W_E as the file holds it
    result = shapes("gpt", "--weights", str(w), "--d-model", "8")
    assert result.exit_code == 2 and "--d-model 8 but" in result.stderr and "drop --d-model" in result.stderr
    missing = shapes("attention", "--weights", str(tmp_path / "does-not-exist.npz"))
    assert missing.exit_code != 0 and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr + missing.stdout


def test_large_vocab_and_context_table_fits_120_columns() -> None:
    out = ok("gpt", "--d-model", "768", "--heads", "12", "--layers", "12", "--d-ff", "3072", "--vocab", "50257",
             "--context", "1024", "--seq", "1024")
    assert max(len(line) for line in out.splitlines()) <= 120
    assert "(1, 12, 1024, 1024)" in out and "38,597,376" in out


ERRORS = {  # args, exit code, text the one-line message must contain
    "unknown model": (["gtp"], 2, "unknown model 'gtp'; did you mean 'gpt'?"),
    "heads do not divide": (["gpt", "--d-model", "10", "--heads", "4"], 2,
                            "d_model 10 is not divisible by 4 heads; use --heads one of 1, 2, 5, 10"),
    "seq zero": (["gpt", "--seq", "0"], 2, "--seq 0: a sequence needs at least 1 token"),
    "seq negative": (["attention", "--seq", "-3"], 2, "give --seq 1 or more"),
    # the name is checked before --seq reads the model's entry (was a KeyError traceback: the request came later)
    "unknown model and seq zero": (["gtp", "--seq", "0"], 2, "unknown model 'gtp'; did you mean 'gpt'?"),
    "seq past context": (["gpt", "--seq", "2000", "--context", "1024"], 1,
                         "--seq 2000 is longer than the context of 1024 positions; use --seq 1024 or less, "
                         "or --context 2000"),
    "seq past the trained context": (["gpt", "--seq", "100"], 1,
                                     "--seq 100 is longer than the trained model's context of 48 positions; use "
                                     "--seq 48 or less, or a size option (--context 100)"),
    "seed with the trained model": (["gpt", "--seed", "3"], 2, "add --random-weights to see random weights"),
    # session 9: said "shorten the text" (shapes has --seq, and no text was given)
    "seq past a checkpoint's context": (["--checkpoint", str(Path(__file__).parents[1] / "data" / "gpt2_tiny"), "--seq",
                                         "1000"], 1,
                                        "--seq 1000 is longer than the checkpoint's context of 32 positions; use --seq "
                                        "32 or less"),
    "seq and text": (["gpt", "--seq", "3", "--text", "a b c"], 2, "give --seq or --text, not both"),
    "seq not a number": (["gpt", "--seq", "many"], 2, "'many' is not a valid integer"),
    "text past context": (["gpt", "--context", "2"], 1, "the input has 4 tokens but the context is 2"),
    "match nothing": (["gpt", "--match", "blocks.9"], 2, "--match 'blocks.9' matches no step or parameter"),
    "nothing to show": (["gpt", "--no-steps", "--no-params"], 2, "leaves nothing to show"),
    "bad tokens": (["gpt", "--tokens", "1,x"], 2, "'x' is not one"),
    "vocab too small": (["gpt", "--vocab", "3"], 2, "use --vocab 45 or more"),
    "one-head model": (["attention", "--heads", "2"], 2, "has one head"),
}


@pytest.mark.parametrize("args,code,text", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_are_one_line(args: list[str], code: int, text: str) -> None:
    assert text in assert_clean_error(shapes(*args), code)


def test_help_has_examples() -> None:
    result = shapes("--help")
    assert result.exit_code == 0
    assert "explain shapes gpt --d-model 768" in result.stdout and "--seq N" in result.stdout


def test_encoder_decoder_breakdown() -> None:
    """Vocab 47 (built-in words + Denkende, Maschinen), d_model 8, 2 heads, d_ff 32, 2 layers:
    encoder block = attn 4·(8·8+8) + 2 ln 2·8 + mlp 8·32+32 + 32·8+8 = 288 + 32 + 552 = 872;
    decoder block = 2 attn 576 + 3 ln 48 + mlp 552 = 1,176; W_E 47·8 = 376, shared by both embeddings and the
    pre-softmax linear (§3.4); untied: W_E 376 each and an unembedding 8·47+47 = 423."""
    out = ok("transformer", "--no-steps")
    assert out.endswith("total: 4,472 parameters\n  = embed 376 + encoder.blocks.0–1 2 × 872 + "
                        "decoder.blocks.0–1 2 × 1,176\n")
    assert 376 + 2 * 872 + 2 * 1176 == 4472
    out = ok("transformer", "--no-steps", "--untie-embeddings")
    assert out.endswith("total: 5,271 parameters\n  = encoder.embed 376 + encoder.blocks.0–1 2 × 872 + "
                        "decoder.embed 376 + decoder.blocks.0–1 2 × 1,176 + unembed 423\n")
    assert 2 * 376 + 2 * 872 + 2 * 1176 + 423 == 5271


@pytest.mark.parametrize("size,args,paper", [
    ("base", ["--d-model", "512", "--heads", "8", "--d-ff", "2048"], 65e6),
    ("big", ["--d-model", "1024", "--heads", "16", "--d-ff", "4096"], 213e6),
])
def test_transformer_counts_match_table_3_of_the_paper(size: str, args: list[str], paper: float) -> None:
    """Attention Is All You Need, Table 3: base 65M and big 213M parameters (vocabulary 37000 shared BPE
    tokens, 6 layers). The paper rounds and does not list its biases; explain is within 4%."""
    doc = json.loads(ok("transformer", *args, "--layers", "6", "--vocab", "37000", "--no-steps", "--json"))
    n = doc["n_params"]
    assert abs(n - paper) / paper < 0.04, (size, n)
