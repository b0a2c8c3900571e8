"""A trained ``gpt`` saved as a Hugging Face GPT-2 folder: ``config.json``, ``model.safetensors`` (float32),
``tokenizer.json`` (explain's word tokenizer as a ``tokenizers`` WordLevel model), and ``explain_train.json``
(how it was trained, and its loss curve).

transformers' ``GPT2LMHeadModel.from_pretrained`` loads the folder, and ``explain run gpt --checkpoint DIR``
reopens it (:mod:`explain.checkpoints.gpt2`, which maps the tensors back; this module is its inverse). Nothing here
needs an optional package: the safetensors file is written by :mod:`explain.io.tensorfile`, the JSON by hand.
A folder is written whole into a temporary sibling and swapped in (:func:`explain.io.atomic.new_folder`), so an
interrupted save leaves the previous checkpoint, never half of one. Since the swap replaces the whole folder,
:func:`check_output` refuses, before training, a folder holding anything but a checkpoint's own files
(:data:`OWN_FILES`), the working folder or one that holds it, and the corpus's folder; an earlier checkpoint is
replaced only with ``--force``. Each save checks again, so a file put there during training is never deleted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from explain.checkpoints.gpt2 import BLOCK_MAP
from explain.checkpoints.wordlevel import tokenizer_json
from explain.core.config import Config
from explain.core.errors import InputError, UsageError
from explain.core.words import SPECIALS
from explain.io.atomic import WriteError, new_folder
from explain.io.paths import check_output_folder
from explain.io.tensorfile import save_file

MARKER = "explain_train.json"  # a folder explain train wrote (and may overwrite)
OWN_FILES = frozenset({"config.json", "model.safetensors", "tokenizer.json", MARKER})  # what a save writes
def hf_config(cfg: Config) -> dict[str, Any]:
    """GPT-2's config.json for the engine's config (no dropout: the engine has none)."""
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": cfg.d_vocab,
            "n_positions": cfg.n_ctx, "n_embd": cfg.d_model, "n_layer": cfg.n_layers, "n_head": cfg.n_heads,
            "n_inner": cfg.ff_dim, "activation_function": "gelu_new", "layer_norm_epsilon": cfg.ln_eps,
            "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "initializer_range": 0.02,
            "scale_attn_weights": True, "tie_word_embeddings": True, "bos_token_id": SPECIALS.index("<bos>"),
            "eos_token_id": SPECIALS.index("<eos>")}


def hf_tensors(P: dict[str, np.ndarray], cfg: Config) -> dict[str, np.ndarray]:
    """GPT-2's tensors (``transformer.`` keys, float32) from the engine's parameters: the per-head W_Q, W_K,
    W_V back into one c_attn (d, 3d), columns q | k | v, head by head; biases the config leaves out are 0."""
    d, h, m = cfg.d_model, cfg.n_heads, cfg.head_dim
    t = {"wte.weight": P["W_E"], "wpe.weight": P["W_pos"], "ln_f.weight": P["ln_final.w"], "ln_f.bias": P["ln_final.b"]}
    for i in range(cfg.n_layers):
        ours, hf = f"blocks.{i}.", f"h.{i}."
        t[hf + "attn.c_attn.weight"] = np.concatenate(
            [P[f"{ours}attn.W_{n}"].transpose(1, 0, 2).reshape(d, h * m) for n in "QKV"], axis=1)
        t[hf + "attn.c_attn.bias"] = np.concatenate(
            [P.get(f"{ours}attn.b_{n}", np.zeros((h, m))).reshape(-1) for n in "QKV"])
        t.update({hf + v: P[ours + k] for k, v in BLOCK_MAP.items()})
    return {"transformer." + k: np.asarray(v, dtype=np.float32) for k, v in t.items()}


def _foreign(path: Path) -> list[str]:
    """The names in the folder ``path`` that a save did not write (none if it does not exist)."""
    try:
        return sorted(p.name for p in path.iterdir() if p.name not in OWN_FILES)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _listed(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def check_output(name: str | Path, force: bool = False, corpus: str | Path | None = None) -> Path:
    """The checkpoint folder ``-o`` names, checked before training starts: refused as every writer's path is
    (:func:`explain.io.paths.check_output_folder`: a NUL, an unknown ``~user``, a name too long, a file, a FIFO, a
    device, a dangling link, a parent that is a file or not writable); the working folder or a folder that holds
    it, and the folder that holds ``corpus`` (a save replaces the whole folder); a folder holding anything a
    save does not write (it is never overwritten); and an earlier checkpoint unless ``force``. Missing parent
    folders are made at the first save."""
    if not str(name).strip():  # paths.expand's "give a file name" names neither -o nor a folder
        raise UsageError("-o is empty; give the checkpoint folder a name, e.g. -o my-gpt")
    path = check_output_folder(name, force=True, parents=True)
    real, here = path.resolve(), Path.cwd().resolve()
    if real == here or real in here.parents:
        what = "the working folder" if real == here else "a folder that holds the working folder"
        raise UsageError(f"-o '{name}' is {what}, and a save replaces its folder whole; give a new folder, "
                         "e.g. -o my-gpt")
    if corpus is not None and real in Path(corpus).resolve().parents:
        raise UsageError(f"-o '{name}' holds the corpus '{corpus}', and a save replaces its folder whole; give "
                         "the checkpoint a folder of its own, e.g. -o my-gpt")
    foreign = _foreign(path)
    if foreign or (path.is_dir() and any(path.iterdir()) and not (path / MARKER).is_file()):
        shown = f" ({_listed(foreign)})" if foreign else ""
        raise InputError(f"'{name}' holds files explain train did not write{shown}; give -o a new folder name")
    if path.is_dir() and (path / MARKER).is_file() and not force:
        raise UsageError(f"'{name}' holds an earlier checkpoint; add --force to replace it, or give -o a new "
                         "folder name")
    return path


def save_folder(dest: Path, P: dict[str, np.ndarray], cfg: Config, words: list[str], info: dict[str, Any]) -> None:
    """Write the checkpoint folder ``dest`` whole (see the module's docstring)."""
    foreign = _foreign(dest)  # put there since training began: the swap would delete it
    if foreign:
        raise WriteError(f"'{dest}' now holds {_listed(foreign)}, which explain train did not write; nothing was "
                         "replaced (move the file, or train again with another -o)")
    with new_folder(dest) as tmp:
        (tmp / "config.json").write_text(json.dumps(hf_config(cfg), indent=2) + "\n")
        save_file(hf_tensors(P, cfg), tmp / "model.safetensors", metadata={"format": "pt"})
        (tmp / "tokenizer.json").write_text(json.dumps(tokenizer_json(words), ensure_ascii=False) + "\n")
        (tmp / MARKER).write_text(json.dumps(info, indent=1) + "\n")
