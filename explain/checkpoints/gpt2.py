"""Hugging Face GPT-2 checkpoints: a folder written by ``save_pretrained`` (``config.json``,
``model.safetensors``, optionally ``tokenizer.json``) opened as the engine's ``gpt``.

:func:`open_checkpoint` reads ``config.json`` and model.safetensors' JSON header, and checks that they agree
(:mod:`explain.checkpoints.folder_check`: json, nothing else), so ``explain shapes gpt --checkpoint DIR`` stays as light as
any shape query and refuses a folder whose files disagree. The heavier pieces load on first use:
the token labels from ``tokenizer.json`` (json again), the tokenizer itself (the ``tokenizers`` package) when
text is encoded, and the weights (numpy and ``safetensors``) when :meth:`GPT2Checkpoint.params` is called.

The GPT-2 tensors map onto the engine's parameters like this (Conv1D layers compute ``x @ W + b``, W is
(in, out), the engine's layout too)::

    wte.weight (V, d)                      W_E (V, d); also the unembedding (lm_head is tied to it)
    wpe.weight (n_ctx, d)                  W_pos
    h.{i}.ln_1 / ln_2 .weight .bias        blocks.{i}.ln1 / ln2 .w .b
    h.{i}.attn.c_attn.weight (d, 3d)       columns q | k | v, each d_head columns per head, in head order:
                                           blocks.{i}.attn.W_Q/W_K/W_V (h, d, d_head), b_Q/b_K/b_V (h, d_head)
    h.{i}.attn.c_proj (d, d)               blocks.{i}.attn.W_O, b_O
    h.{i}.mlp.c_fc (d, d_ff), c_proj       blocks.{i}.mlp.W_in, b_in, W_out, b_out
    ln_f                                   ln_final.w, ln_final.b

Keys may carry the ``transformer.`` prefix (GPT2LMHeadModel) or not (GPT2Model, and the hub's ``gpt2``). The
causal-mask buffers ``h.{i}.attn.bias``/``masked_bias`` and a stored ``lm_head.weight`` are ignored, as
transformers does when the embeddings are tied.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from explain.checkpoints import tokenizer_guard, wordlevel
from explain.checkpoints.folder_check import Table, check_caps, check_tensors, header_table
from explain.checkpoints.protocol import WeightOrigin
from explain.checkpoints.token_labels import token_labels
from explain.checkpoints.trained import SHIPPED
from explain.core.errors import ExplainError, InputError, WeightsError
from explain.core.limits import MAX_JSON_BYTES
from explain.core.text import RowLabels
from explain.io.readers import read_json
from explain.trace.origin import WeightOrigins

CONFIG, WEIGHTS, TOKENIZER = "config.json", "model.safetensors", "tokenizer.json"
INSTALL = "pip install safetensors tokenizers (explain's default install has them)"
# Both names are GELU's tanh approximation, the only GELU the engine computes (explain.ops.kernels.gelu).
ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh")

# transformers' GPT2Config defaults, used for the keys a config.json leaves out, as transformers does.
_DEFAULTS: dict[str, Any] = dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                                 n_inner=None, activation_function="gelu_new", layer_norm_epsilon=1e-5,
                                 scale_attn_weights=True, scale_attn_by_inverse_layer_idx=False,
                                 add_cross_attention=False, tie_word_embeddings=True)
# Engine name suffix -> GPT-2 key suffix, for the tensors that map one to one (per block unless global).
BLOCK_MAP = {"ln1.w": "ln_1.weight", "ln1.b": "ln_1.bias", "ln2.w": "ln_2.weight", "ln2.b": "ln_2.bias",
              "attn.W_O": "attn.c_proj.weight", "attn.b_O": "attn.c_proj.bias",
              "mlp.W_in": "mlp.c_fc.weight", "mlp.b_in": "mlp.c_fc.bias",
              "mlp.W_out": "mlp.c_proj.weight", "mlp.b_out": "mlp.c_proj.bias"}
_IGNORED = re.compile(r"(transformer\.)?h\.\d+\.attn\.(masked_)?bias|lm_head\.weight")


class DependencyError(ExplainError):
    """An optional package the checkpoint needs is not installed."""


def _config_options(cfg: dict[str, Any], where: str) -> dict[str, Any]:
    """The engine's options from a GPT-2 config, or a one-line error naming the key that cannot be used."""
    if cfg.get("model_type") != "gpt2":
        raise WeightsError(f"{where} has model_type {cfg.get('model_type')!r}; explain reads model_type 'gpt2', "
                           "the Llama family's ('llama', 'mistral', 'qwen2', …), 'gemma3_text' or 'bert'")
    get = {**_DEFAULTS, **cfg}.get
    n_ctx_key = "n_positions" if "n_positions" in cfg or "n_ctx" not in cfg else "n_ctx"
    ints = {}
    for key in ("n_embd", "n_head", "n_layer", "vocab_size", n_ctx_key, "n_inner"):
        v = get(key)
        if key == "n_inner" and v is None:
            v = 4 * ints["n_embd"]  # GPT-2's MLP is 4·d wide unless n_inner says otherwise
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise WeightsError(f"{where}: {key} must be a positive whole number, got {v!r}")
        ints[key] = v
    act = get("activation_function")
    if act not in ACTIVATIONS:
        raise WeightsError(f"{where} sets activation_function {act!r}; explain's gpt computes GELU with the tanh "
                           f"approximation only ({' or '.join(repr(a) for a in ACTIVATIONS)})")
    for key, need in (("scale_attn_weights", True), ("scale_attn_by_inverse_layer_idx", False),
                      ("add_cross_attention", False), ("tie_word_embeddings", True)):
        if bool(get(key)) != need:
            raise WeightsError(f"{where} sets {key} to {get(key)!r}; explain's gpt needs {need} "
                               "(scaled attention by √d_head, no cross-attention, tied embeddings)")
    eps = get("layer_norm_epsilon")
    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not 0 < eps < 1:
        raise WeightsError(f"{where}: layer_norm_epsilon must be a small positive number, got {eps!r}")
    d, h = ints["n_embd"], ints["n_head"]
    if d % h:
        raise WeightsError(f"{where}: n_embd {d} is not divisible by n_head {h}")
    return dict(d_model=d, n_heads=h, d_head=d // h, n_layers=ints["n_layer"], d_ff=ints["n_inner"],
                d_vocab=ints["vocab_size"], n_ctx=ints[n_ctx_key], ln_eps=float(eps))


def read_checkpoint_json(path: Path, what: str, limit: int = MAX_JSON_BYTES) -> Any:
    """A JSON file of the checkpoint, through :func:`explain.io.readers.read_json` (size, depth and digit limits;
    errors name the file and line)."""
    return read_json(path, "file", f"it must be {what}", WeightsError, limit)


# --- weights ----------------------------------------------------------------------------------------------

def _expected_shapes(o: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every GPT-2 tensor (key without prefix) and the shape config.json implies for it."""
    d, f = o["d_model"], o["d_ff"]
    shapes = {"wte.weight": (o["d_vocab"], d), "wpe.weight": (o["n_ctx"], d),
              "ln_f.weight": (d,), "ln_f.bias": (d,)}
    for i in range(o["n_layers"]):
        for key, shape in (("ln_1.weight", (d,)), ("ln_1.bias", (d,)), ("attn.c_attn.weight", (d, 3 * d)),
                           ("attn.c_attn.bias", (3 * d,)), ("attn.c_proj.weight", (d, d)), ("attn.c_proj.bias", (d,)),
                           ("ln_2.weight", (d,)), ("ln_2.bias", (d,)), ("mlp.c_fc.weight", (d, f)),
                           ("mlp.c_fc.bias", (f,)), ("mlp.c_proj.weight", (f, d)), ("mlp.c_proj.bias", (d,))):
            shapes[f"h.{i}.{key}"] = shape
    return shapes


def read_bf16(path: Path, key: str) -> Any:
    """A bfloat16 tensor, which numpy has no type for: the top half of a float32, read from the file's header
    offsets (the safetensors format: an 8-byte header length, the JSON header, the data)."""
    import numpy as np  # lazy: numpy off the shape path

    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        info = json.loads(fh.read(n))[key]
        start, end = info["data_offsets"]
        fh.seek(8 + n + start)
        half = np.frombuffer(fh.read(end - start), dtype="<u2")
    return (half.astype(np.uint32) << 16).view(np.float32).reshape(info["shape"])


def _to_engine(get: Callable[[str], Any], o: dict[str, Any]) -> dict[str, Any]:
    """The engine's parameters from GPT-2's tensors (``get(key)`` gives one as float64)."""
    import numpy as np  # lazy: numpy off the shape path

    d, h, m = o["d_model"], o["n_heads"], o["d_head"]
    p = {"W_E": get("wte.weight"), "W_pos": get("wpe.weight")}
    for i in range(o["n_layers"]):
        hf, ours = f"h.{i}.", f"blocks.{i}."
        W, b = get(hf + "attn.c_attn.weight"), get(hf + "attn.c_attn.bias")  # (d, 3d), (3d,): q | k | v
        for j, name in enumerate("QKV"):
            cols = slice(j * d, (j + 1) * d)  # within them head s owns columns s·m … s·m + m - 1
            p[f"{ours}attn.W_{name}"] = np.ascontiguousarray(W[:, cols].reshape(d, h, m).transpose(1, 0, 2))
            p[f"{ours}attn.b_{name}"] = b[cols].reshape(h, m).copy()
        p.update({ours + k: get(hf + v) for k, v in BLOCK_MAP.items()})
    p["ln_final.w"], p["ln_final.b"] = get("ln_f.weight"), get("ln_f.bias")
    return p


def check_gpt2(table: Table, path: Path, o: dict[str, Any]) -> dict[str, str]:
    """A GPT-2 model.safetensors' tensors (``table``: name -> shape, dtype) against the shapes config.json
    implies (:func:`explain.checkpoints.folder_check.check_tensors`); returns the key of each tensor, prefix and all."""
    prefix = "transformer." if any(k.startswith("transformer.") for k in table) else ""
    says = (f"n_layer {o['n_layers']}, n_embd {o['d_model']}, n_inner {o['d_ff']}, vocab_size {o['d_vocab']}, "
            f"n_positions {o['n_ctx']}")
    short = lambda k: None if _IGNORED.fullmatch(k) else k[len(prefix):] if k.startswith(prefix) else k  # noqa: E731
    return check_tensors(table, _expected_shapes(o), says, short=short, stored=lambda s: prefix + s,
                         where=lambda k: f"'{path}'", missing_where=f"'{path}'")


def load_params(path: Path, o: dict[str, Any]) -> dict[str, Any]:
    """The engine's parameters (float64) from a GPT-2 model.safetensors, every key and shape checked against
    the config first; errors name the file and the key."""
    import numpy as np  # lazy: numpy off the shape path

    try:
        from safetensors import safe_open  # lazy: optional dependency (the checkpoint extra)
    except ImportError:  # the core install: numpy reads the file (the shipped trained model is one)
        from explain.io.tensorfile import SafeFile as safe_open  # type: ignore[assignment]  # lazy: as above
    try:
        f = safe_open(str(path), framework="numpy")
    except Exception as exc:  # the parser's own errors (bad header, truncated file) have no common base
        msg = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise WeightsError(f"cannot read '{path}': {msg}; it must be a safetensors file "
                           "(save_pretrained(safe_serialization=True) writes one)") from None
    with f:
        table = {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}
        found = check_gpt2(table, path, o)

        def get(short: str) -> Any:
            k = found[short]
            arr = (read_bf16(path, k) if f.get_slice(k).get_dtype() == "BF16" else f.get_tensor(k)).astype(np.float64)
            if not np.isfinite(arr).all():
                raise WeightsError(f"tensor '{k}' in '{path}' contains NaN or infinite values")
            return arr

        return _to_engine(get, o)


# --- the checkpoint ---------------------------------------------------------------------------------------

class GPT2Checkpoint:
    """A GPT-2 checkpoint folder: its config as engine options, its tokenizer, and (loaded once, on first use)
    its weights under the engine's names. It and every reader built on it give
    :class:`explain.checkpoints.protocol.Checkpoint`, a run's tokenizer too (``TextTokenizer``)."""

    name = "checkpoint"
    model = "gpt"  # the registry's model that runs it
    context_what = "the checkpoint's context"
    unknown: Sequence[str] = ()  # the words of the last text encoded that became <unk> (a word-level tokenizer's)
    weight_origin: WeightOrigin | None = None  # its floats are the file's as stored (a GGUF's are rebuilt: its own)
    _words: dict[str, int] | None = None  # a word-level vocabulary explain wrote (explain.checkpoints.wordlevel)
    fixed = True  # token ids index the embedding's rows: none past vocab_size
    special_tokens = False  # whether encoding adds the special tokens tokenizer.json's post-processor names

    def __init__(self, path: Path, config: dict[str, Any]) -> None:
        self.path = path
        if os.path.realpath(path) == os.path.realpath(SHIPPED):  # refusals name what the user asked for
            self.name, self.context_what = "trained model", "the trained model's context"
        self.config = config
        self.options: dict[str, Any] = _config_options(config, f"'{path / CONFIG}'")
        self.weights_path = path / WEIGHTS
        check_caps(self.options)
        check_gpt2(header_table(self.weights_path), self.weights_path, self.options)  # the files agree, or one line
        tok = path / TOKENIZER
        self.tokenizer_path: Path | None = tok if tok.is_file() else None
        self._labels: dict[int, str] | None = None
        self._tokenizer: Any = None
        self.unknown: list[str] = []  # the words of the last text encoded that became <unk>
        self._params: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"Checkpoint('{self.path}', {self.options})"

    def _token_labels(self) -> dict[int, str]:
        """Labels from tokenizer.json, checked against the vocabulary size (json only, no tokenizers)."""
        if self._labels is None:
            if self.tokenizer_path is None:
                self._labels = {}
            else:
                data = read_checkpoint_json(self.tokenizer_path, "a tokenizer.json written by 'tokenizers'")
                labels = token_labels(data, str(self.tokenizer_path))
                size, V = max(labels, default=-1) + 1, self.options["d_vocab"]
                if size > V:  # fewer is fine: some checkpoints pad the embedding (e.g. to 50304 rows)
                    raise InputError(f"'{self.tokenizer_path}' has {size} tokens but {CONFIG} has vocab_size {V}; "
                                     "the tokenizer belongs to another model (remove it and give --tokens)")
                self._labels = labels
                self._words = wordlevel.word_vocab(data)  # a word tokenizer explain train wrote
        return self._labels

    def label(self, token_id: int) -> str:
        """A readable label for a token id: the decoded token with spaces shown as '␣', or '#id'."""
        return self._token_labels().get(token_id, f"#{token_id}")

    def __len__(self) -> int:
        return self.options["d_vocab"]

    def labels(self, text: str, ids: list[int]) -> list[str]:
        return [self.label(i) for i in ids]

    def pad_id(self) -> int:
        """config.json's eos_token_id (GPT-2: 50256): GPT-2 has no pad token, and Hugging Face pads a GPT-2 batch
        with its eos; 0 when the config names none. Padded positions are masked and ignored, so its value never
        reaches a real position."""
        eos = self.config.get("eos_token_id")
        return eos if isinstance(eos, int) and 0 <= eos < self.options["d_vocab"] else 0

    def vocab_labels(self) -> Sequence[str]:
        """One label per row of the embedding (length vocab_size), made when a row is shown."""
        return RowLabels(self._token_labels(), self.options["d_vocab"])

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` from the checkpoint's own tokenizer, with no special tokens added (unless
        ``special_tokens``: BERT's [CLS] … [SEP])."""
        if self.tokenizer_path is None:
            raise InputError(f"checkpoint '{self.path}' has no {TOKENIZER}; give --tokens (ids, e.g. 464,3797)")
        self._token_labels()  # refuse a tokenizer of another vocabulary before using it
        if self._words is not None:  # no tokenizers needed: explain.core.words.split_words, as explain train's
            ids, self.unknown = wordlevel.encode(self._words, text)
            return ids
        if self._tokenizer is None:
            try:
                import tokenizers  # noqa: F401  # lazy: optional dependency (the checkpoint extra)
            except ImportError:
                raise DependencyError(f"reading text with {TOKENIZER} needs the 'tokenizers' package: {INSTALL} "
                                      "(or give --tokens)") from None
            data = read_checkpoint_json(self.tokenizer_path, "a tokenizer.json written by 'tokenizers'")
            self._tokenizer = tokenizer_guard.load(self.tokenizer_path, data, self.special_tokens)
        return self._tokenizer.encode(text)

    def word_vocab(self) -> dict[str, int] | None:
        """The word-level vocabulary of a tokenizer.json explain train wrote (word → id), else None."""
        self._token_labels()
        return self._words

    def tokenizer_json(self) -> Any:
        """The folder's tokenizer.json, parsed (None when it has none): explain tokenize walks through it."""
        if self.tokenizer_path is None:
            return None
        self._token_labels()  # refuse a tokenizer of another vocabulary first
        return read_checkpoint_json(self.tokenizer_path, "a tokenizer.json written by 'tokenizers'")

    def bos(self) -> int | None:
        return None  # GPT-2's encode puts no id before a text (Gemma's readers put their <bos> there)

    def tokenizer_fields(self) -> tuple[Any, str, list[str], list[str]] | None:
        return None  # a folder's tokenizer is its tokenizer.json (a GGUF reader gives its file's fields)

    def sentencepiece_json(self, text: str) -> dict[str, Any] | None:
        return None  # as above (a GGUF of SentencePiece pieces builds one per text's characters)

    def params(self) -> dict[str, Any]:
        """Every parameter under the engine's name, float64; read from model.safetensors once."""
        if self._params is None:
            self._params = load_params(self.weights_path, self.options)
        return self._params

    def weight_origins(self, names: Iterable[str]) -> WeightOrigins | None:
        """Where each weight came from in the file: None, its floats are the file's as stored (a GGUF's: its own)."""
        return None


__all__ = ["GPT2Checkpoint", "load_params", "token_labels", "DependencyError", "ACTIVATIONS"]
