"""Generated fixtures for the bad-input suite: files a hostile or careless user could hand explain.

:func:`make` writes them all into one folder (nothing is checked in: a zip bomb and a 100,000-deep JSON are
cheaper to generate than to store). Every string a file carries that could reach a terminal holds :data:`ESC`:
a window retitle (OSC 2), a screen clear (CSI 2J), an 8-bit CSI and a bell.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path

import numpy as np

ESC = "\x1b]2;pwned\x1b\\\x1b[2J\x9b31m\x07"
GIANT = "9" * 5000  # a 5,000-digit integer
TOML_ESC = ESC.encode("unicode_escape").decode().replace("\\x", "\\u00")  # TOML spells \x1b as \u001b

TUTORIAL_HEAD = 'title = "T"\nsummary = "S"\nmodel = "simple"\n[options]\ntext = "a b"\n'
STOP = '[[stops]]\nstep = "{step}"\ntitle = "a stop"\nnarration = "words"\n{extra}'


def tutorial(body: str = "", step: str = "attn.scores", extra: str = "", head: str = TUTORIAL_HEAD) -> str:
    return head + body + STOP.format(step=step, extra=extra)


def _npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    """The bytes of an .npy header declaring ``shape`` (no data follows unless the caller writes it)."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _safetensors(tensors: dict[str, tuple[list[int], bytes]]) -> bytes:
    """A safetensors file written by hand (8-byte header length, JSON header, data), F32 tensors."""
    header, data = {}, b""
    for name, (shape, raw) in tensors.items():
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def _gpt2_config(**over: object) -> dict:
    cfg = dict(model_type="gpt2", n_embd=4, n_head=2, n_layer=1, vocab_size=8, n_positions=8,
               activation_function="gelu_new", layer_norm_epsilon=1e-5)
    cfg.update(over)
    return cfg


def _checkpoint(d: Path, config: dict | str, tensors: dict[str, tuple[list[int], bytes]] | None = None,
                tokenizer: str | None = None) -> None:
    d.mkdir()
    (d / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    (d / "model.safetensors").write_bytes(_safetensors(tensors or _gpt2_tensors()))
    if tokenizer is not None:
        (d / "tokenizer.json").write_text(tokenizer)


def _gpt2_tensors(n_layer: int = 1, d: int = 4, vocab: int = 8, ctx: int = 8) -> dict[str, tuple[list[int], bytes]]:
    """Every tensor of a GPT-2 (GPT2LMHeadModel's names), zeros of the shapes its config implies."""
    shapes = {"transformer.wte.weight": [vocab, d], "transformer.wpe.weight": [ctx, d],
              "transformer.ln_f.weight": [d], "transformer.ln_f.bias": [d]}
    for i in range(n_layer):
        for k, shape in (("ln_1.weight", [d]), ("ln_1.bias", [d]), ("attn.c_attn.weight", [d, 3 * d]),
                         ("attn.c_attn.bias", [3 * d]), ("attn.c_proj.weight", [d, d]), ("attn.c_proj.bias", [d]),
                         ("ln_2.weight", [d]), ("ln_2.bias", [d]), ("mlp.c_fc.weight", [d, 4 * d]),
                         ("mlp.c_fc.bias", [4 * d]), ("mlp.c_proj.weight", [4 * d, d]), ("mlp.c_proj.bias", [d])):
            shapes[f"transformer.h.{i}.{k}"] = shape
    return {k: (v, bytes(4 * int(np.prod(v)))) for k, v in shapes.items()}


LLAMA_CONFIG = dict(model_type="llama", hidden_size=4, num_attention_heads=2, num_key_value_heads=1,
                    num_hidden_layers=1, intermediate_size=8, vocab_size=8, max_position_embeddings=8)


def _llama_tensors() -> dict[str, tuple[list[int], bytes]]:
    """Every tensor of LLAMA_CONFIG's model (tied embeddings), zeros."""
    p = "model.layers.0."
    shapes = {"model.embed_tokens.weight": [8, 4], "model.norm.weight": [4], p + "input_layernorm.weight": [4],
              p + "self_attn.q_proj.weight": [4, 4], p + "self_attn.k_proj.weight": [2, 4],
              p + "self_attn.v_proj.weight": [2, 4], p + "self_attn.o_proj.weight": [4, 4],
              p + "post_attention_layernorm.weight": [4], p + "mlp.gate_proj.weight": [8, 4],
              p + "mlp.up_proj.weight": [8, 4], p + "mlp.down_proj.weight": [4, 8]}
    return {k: (v, bytes(4 * int(np.prod(v)))) for k, v in shapes.items()}


def _sharded(d: Path, index: dict[str, str], shards: dict[str, list[str]]) -> None:
    """A Llama folder whose tensors are split over ``shards`` (file -> names) with ``index`` as its weight_map."""
    d.mkdir()
    (d / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    t = _llama_tensors()
    for name, keys in shards.items():
        (d / name).write_bytes(_safetensors({k: t[k] for k in keys}))
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": index}))


def hostile_tokenizer(regex: str = r"(?:a|a?)+\d") -> dict:
    """A valid 8-token byte-level BPE tokenizer.json whose Split pre-tokenizer regex backtracks past Oniguruma's
    retry limit on any run of letters: tokenizers panics (a Rust message, then PanicException)."""
    vocab = {c: i for i, c in enumerate("abcdefgh")}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}]},
            "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                      "merges": []}}


def _zip_bomb(path: Path, name: str, shape: tuple[int, ...]) -> None:
    """An .npz whose member really is ``shape`` of zeros (GiBs) but compresses to a few MB."""
    header = _npy_header(shape)
    total = int(np.prod(shape)) * 8
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open(zipfile.ZipInfo(f"{name}.npy"), "w", force_zip64=True) as f:
            f.write(header)
            chunk = bytes(64 * 2**20)
            left = total
            while left:
                n = min(left, len(chunk))
                f.write(chunk[:n])
                left -= n


def make(d: Path) -> Path:
    """Write every fixture into ``d`` and return it."""
    d.mkdir(parents=True, exist_ok=True)
    w = lambda name, text: (d / name).write_text(text)  # noqa: E731

    # --- tutorials ---
    w("tut_key.toml", TUTORIAL_HEAD.replace('summary = "S"\n', f'summary = "S"\n"bad{TOML_ESC}" = 1\n') + STOP.format(
        step="attn.scores", extra=""))
    w("tut_step.toml", tutorial(step=f"attn{TOML_ESC}"))
    w("tut_question.toml", tutorial(extra=f'answer = "{TOML_ESC}"\n'))  # an answer without a question
    w("tut_display.toml", TUTORIAL_HEAD.replace('"T"', f'"T{TOML_ESC}"') + STOP.format(
        step="attn.scores", extra=f'question = "q{TOML_ESC}"\nanswer = "a{TOML_ESC}"\n').replace(
        'narration = "words"', f'narration = "n{TOML_ESC}"'))
    w("tut_shape.toml", TUTORIAL_HEAD.replace('text = "a b"\n', 'text = "a b"\nembeddings = { shape = [100000, 100000] }\n')
      + STOP.format(step="attn.scores", extra=""))
    w("tut_deep.toml", TUTORIAL_HEAD + "deep = " + "[" * 5000 + "]" * 5000 + "\n")
    w("tut_deep_table.toml", TUTORIAL_HEAD + "deep = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")
    w("tut_layers.toml", tutorial().replace('model = "simple"', 'model = "gpt"').replace(
        'text = "a b"\n', 'text = "a b"\nn_layers = 10000000\n'))
    w("tut_layers6.toml", tutorial().replace('model = "simple"', 'model = "gpt"').replace(
        'text = "a b"\n', 'text = "a b"\nn_layers = 1000000\n'))
    w("tut_giant.toml", tutorial().replace('text = "a b"\n', f'text = "a b"\nd_model = {GIANT[:18]}\n'))
    w("tut_tol.toml", tutorial(body="", extra="[stops.expect]\ntol = nan\nvalue = 0.5\n"))
    w("tut_toptol.toml", tutorial().replace('model = "simple"\n', 'model = "simple"\ntol = inf\n'))
    w("tut_weights_npy.toml", tutorial().replace('model = "simple"\n', 'model = "simple"\nweights = "w.npy"\n'))
    w("tut_weights_text.toml", tutorial().replace('model = "simple"\n', 'model = "simple"\nweights = "notes.npz"\n'))
    w("tut_bomb.toml", tutorial().replace('model = "simple"\n', 'model = "simple"\nweights = "bomb.npz"\n'))
    w("tut_binary.toml", "")
    (d / "tut_binary.toml").write_bytes(b"\xff\xfe\x00title")

    # --- numpy files ---
    np.save(d / "w.npy", np.ones((2, 2)))
    np.save(d / "emb.npy", np.ones((2, 4)))
    np.save(d / "emb_1e308.npy", np.full((2, 4), 1e308))
    np.save(d / "emb_4d.npy", np.ones((2, 2, 2, 2)))  # 3-D is a batch; 4-D is nothing
    np.save(d / "emb_pickle.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (d / "emb_huge.npy").write_bytes(_npy_header((10**6, 10**6)) + bytes(64))
    (d / "emb_truncated.npy").write_bytes(_npy_header((100, 4)) + bytes(64))
    (d / "emb_badheader.npy").write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': __import__('os')}\n")
    with zipfile.ZipFile(d / "emb_huge.npz", "w") as zf:
        zf.writestr("embeddings.npy", _npy_header((10**6, 10**6)) + bytes(64))
    with zipfile.ZipFile(d / "emb_member.npz", "w") as zf:
        zf.writestr("embeddings", b"not an array at all " * 3)
    (d / "emb_corrupt.npz").write_bytes(b"PK\x03\x04" + os.urandom(200))
    (d / "notes.npz").write_text("these are my notes, not weights\n")
    (d / "emb_text.npy").write_text("1, 2, 3\n")
    _zip_bomb(d / "bomb.npz", "embeddings", (160_000, 1024))  # 1.2 GiB of zeros, about 1.2 MB on disk
    params = {"attn.W_Q": np.ones((4, 4)), "attn.W_K": np.ones((4, 4)), "attn.W_V": np.ones((4, 4))}
    with zipfile.ZipFile(d / "w_huge.npz", "w") as zf:
        for k, v in params.items():
            header = _npy_header((10**5, 10**5)) if k == "attn.W_Q" else _npy_header(v.shape)
            zf.writestr(f"{k}.npy", header + v.tobytes())
    with zipfile.ZipFile(d / "w_esc.npz", "w") as zf:
        zf.writestr(f"attn.W{ESC}.npy", _npy_header((4, 4)) + np.ones((4, 4)).tobytes())

    # --- JSON / CSV embeddings ---
    w("emb_deep.json", "[" * 100_000 + "]" * 100_000)
    w("emb_object.json", '{"rows": [[1, 2], [3, 4]]}')
    w("emb_bool.json", "[[true, false], [false, true]]")
    w("emb_giant.json", f"[[{GIANT}, 1], [1, 1]]")
    w("emb_ragged.json", "[[1, 2], [3]]")
    w("emb_string.json", f'[["{ESC}", 1], [1, 1]]'.replace("\x1b", "\\u001b").replace("\x9b", "\\u009b")
      .replace("\x07", "\\u0007"))
    w("emb_syntax.json", "[[1, 2],\n [3, 4,]]")
    w("emb_long.csv", "1," + "7" * 200_000 + "\n1,2\n")
    w("emb_bad.csv", f"1,2\n3,x{ESC}\n")
    w("emb_quote.csv", '1,"2\n')
    w("emb.txt", "1 2\n3 4\n")

    # --- checkpoints ---
    _checkpoint(d / "ck_deep", "[" * 100_000 + "]" * 100_000)
    _checkpoint(d / "ck_giant", json.dumps(_gpt2_config()).replace('"n_layer": 1', f'"n_layer": {GIANT}'))
    _checkpoint(d / "ck_layers", _gpt2_config(n_layer=10_000_000))
    _checkpoint(d / "ck_layers4", _gpt2_config(n_layer=10_000))
    _checkpoint(d / "ck_list", "[1, 2, 3]")
    _checkpoint(d / "ck_bool", _gpt2_config(n_layer=True))
    _checkpoint(d / "ck_esc", _gpt2_config(), {**_gpt2_tensors(), f"h.0.{ESC}": ([1], bytes(4))})
    _checkpoint(d / "ck_ok", _gpt2_config())
    _checkpoint(d / "ck_tokdeep", _gpt2_config(), tokenizer="[" * 100_000 + "]" * 100_000)
    _checkpoint(d / "ck_toktype", _gpt2_config(), tokenizer='{"model": {"vocab": [1, 2, 3]}}')
    _checkpoint(d / "ck_tokhostile", _gpt2_config(), tokenizer=json.dumps(hostile_tokenizer()))
    _checkpoint(d / "ck_tokdir", _gpt2_config())
    (d / "ck_tokdir" / "tokenizer.json").mkdir()
    _checkpoint(d / "ck_tokfifo", _gpt2_config())
    os.mkfifo(d / "ck_tokfifo" / "tokenizer.json")
    _checkpoint(d / "ck_wfifo", _gpt2_config())
    (d / "ck_wfifo" / "model.safetensors").unlink()
    os.mkfifo(d / "ck_wfifo" / "model.safetensors")

    # checkpoint folders whose files disagree: refused on opening, before any tensor is read
    full = _gpt2_tensors()
    _checkpoint(d / "ck_vocab", _gpt2_config(vocab_size=16), full)  # wte has 8 rows
    _checkpoint(d / "ck_deeper", _gpt2_config(n_layer=2), full)  # the file holds one block
    _checkpoint(d / "ck_shallower", _gpt2_config(), _gpt2_tensors(n_layer=2))
    _checkpoint(d / "ck_notensor", _gpt2_config(), {k: v for k, v in full.items() if "c_fc.bias" not in k})
    _checkpoint(d / "ck_int", _gpt2_config(), {**full, "transformer.ln_f.bias": ([4], bytes(16))})
    (d / "ck_int" / "model.safetensors").write_bytes((d / "ck_int" / "model.safetensors").read_bytes().replace(
        b'"transformer.ln_f.bias": {"dtype": "F32"', b'"transformer.ln_f.bias": {"dtype": "I32"'))
    big = hostile_tokenizer()
    big["pre_tokenizer"] = None
    big["model"]["vocab"] = {f"t{i}": i for i in range(20)}
    _checkpoint(d / "ck_tokvocab", _gpt2_config(), full, tokenizer=json.dumps(big))  # 20 tokens, 8 rows
    _checkpoint(d / "ck_cut", _gpt2_config(), full)
    whole = (d / "ck_cut" / "model.safetensors").read_bytes()
    (d / "ck_cut" / "model.safetensors").write_bytes(whole[: len(whole) - 100])  # an interrupted copy
    _checkpoint(d / "ck_offsets", _gpt2_config(), full)
    (d / "ck_offsets" / "model.safetensors").write_bytes(whole.replace(b'"shape": [4]', b'"shape": [5]', 1))
    names = sorted(_llama_tensors())
    half = {"model-1.safetensors": names[:6], "model-2.safetensors": names[6:]}
    _sharded(d / "ck_shard_gone", {k: f for f, ks in half.items() for k in ks}, {"model-1.safetensors": names[:6]})
    _sharded(d / "ck_shard_wrong", dict.fromkeys(names, "model-1.safetensors"), half)
    _sharded(d / "ck_shard_unlisted", {k: "model-1.safetensors" for k in names[:6]},
             {"model-1.safetensors": names})  # the index leaves out tensors its shard holds
    _sharded(d / "ck_shard_ok", {k: f for f, ks in half.items() for k in ks}, half)
    (d / "ck_llama_size").mkdir()
    (d / "ck_llama_size" / "config.json").write_text(json.dumps({**LLAMA_CONFIG, "intermediate_size": 16}))
    (d / "ck_llama_size" / "model.safetensors").write_bytes(_safetensors(_llama_tensors()))

    # --- GGUF files and training corpora ---
    (d / "cut.gguf").write_bytes(b"GGUF" + struct.pack("<I", 3))  # the magic and version, then nothing
    (d / "counts.gguf").write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 2**63 - 1, 2**63 - 1))  # 2^63 tensors
    (d / "corpus_bin.txt").write_bytes(b"\xff\xfe\x00 binary")
    w("corpus_empty.txt", "\n\n")

    # --- things that are not files ---
    (d / "folder.npy").mkdir()
    os.mkfifo(d / "fifo.npy")
    (d / "loop.npy").symlink_to("loop.npy")
    (d / "dangling.npz").symlink_to("nowhere/target.npz")
    (d / "dangling.npy").symlink_to("nowhere.npy")
    return d
