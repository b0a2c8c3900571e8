"""BERT checkpoints in a Hugging Face folder (``model_type`` bert), opened as the engine's ``bert``: ``config.json``,
``model.safetensors`` and a WordPiece ``tokenizer.json`` (all-MiniLM-L6-v2, bert-base-uncased, …).

Opening reads the config and the safetensors header (JSON, no tensor data) and checks that they agree
(:mod:`explain.checkpoints.folder_check`), so ``explain shapes`` stays light, and a config.json alone is enough to
count and plan a model; the weights are read on first use. A BertModel's tensors map onto the engine's parameters
like this (a linear weight is stored [out, in]; the engine computes x·W)::

    embeddings.word_embeddings.weight [V, d]              W_E
    embeddings.position_embeddings.weight [n_ctx, d]       W_pos
    embeddings.token_type_embeddings.weight [2, d]         W_type
    embeddings.LayerNorm.weight / bias                     embed_ln.w / b
    encoder.layer.N.attention.self.query.weight [h·m, d]   blocks.N.attn.W_Q (h, d, m), bias b_Q (h, m); key, value
    encoder.layer.N.attention.output.dense [d, d]          blocks.N.attn.W_O, b_O
    encoder.layer.N.attention.output.LayerNorm             blocks.N.ln1.w / b
    encoder.layer.N.intermediate.dense [f, d]              blocks.N.mlp.W_in, b_in
    encoder.layer.N.output.dense [d, f]                    blocks.N.mlp.W_out, b_out
    encoder.layer.N.output.LayerNorm                       blocks.N.ln2.w / b
    pooler.dense [d, d]                                    pooler.W, pooler.b (carried, not used)

A ``bert.`` prefix (BertForMaskedLM, BertForPreTraining) is read too, with the old ``LayerNorm.gamma``/``beta``
names; their prediction heads (``cls.*``) and the ``position_ids``/``token_type_ids`` buffers are left out; a folder
without a pooler gets zeros there (the sentence head never reads it). What the engine does not compute is refused
in one line: another activation than erf GELU, relative positions, a decoder, token types other than two.

The tokenizer is ``tokenizers``' own, with the special tokens its post-processor adds ([CLS] … [SEP]) and its
padding and truncation turned off: a batch is padded by the run, and a text longer than max_position_embeddings is
refused in one line rather than cut.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from explain.checkpoints.folder_check import check_caps, check_tensors, header_table
from explain.checkpoints.gpt2 import CONFIG, INSTALL, TOKENIZER, WEIGHTS, DependencyError, GPT2Checkpoint, read_bf16
from explain.core.errors import InputError, WeightsError

MODEL_TYPES = ("bert",)
TOKEN_TYPES = 2  # the engine's W_type rows (explain.models.bert.TOKEN_TYPES)
_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")
_OLD_NAMES = {"gamma": "weight", "beta": "bias"}  # LayerNorm's names in checkpoints converted from TensorFlow


def bert_options(cfg: dict[str, Any], where: str) -> dict[str, Any]:
    """The engine's options from a BERT config.json (transformers' BertConfig defaults for the keys left out), or
    a one-line error naming the key that cannot be used."""
    get = {"max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
           "position_embedding_type": "absolute", "intermediate_size": None, **cfg}.get
    ints: dict[str, int] = {}
    for key in ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size", "vocab_size",
                "max_position_embeddings", "type_vocab_size"):
        v = get(key)
        if v is None and key == "intermediate_size":
            v = 4 * ints["hidden_size"]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise WeightsError(f"{where}: {key} must be a positive whole number, got {v!r}")
        ints[key] = v
    d, h = ints["hidden_size"], ints["num_attention_heads"]
    if d % h:
        raise WeightsError(f"{where}: hidden_size {d} is not divisible by num_attention_heads {h}")
    if get("hidden_act") != "gelu":
        raise WeightsError(f"{where} sets hidden_act {get('hidden_act')!r}; explain's bert computes GELU with erf "
                           "('gelu') only")
    if get("position_embedding_type") != "absolute":
        raise WeightsError(f"{where} sets position_embedding_type {get('position_embedding_type')!r}; explain's bert "
                           "has learned absolute positions only")
    if ints["type_vocab_size"] != TOKEN_TYPES:
        raise WeightsError(f"{where} sets type_vocab_size {ints['type_vocab_size']}; explain's bert has "
                           f"{TOKEN_TYPES} token types (segments A and B)")
    if get("is_decoder") or get("add_cross_attention"):
        raise WeightsError(f"{where} is a BERT decoder (is_decoder / add_cross_attention); explain's bert is the "
                           "encoder")
    eps = get("layer_norm_eps")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise WeightsError(f"{where}: layer_norm_eps must be a small positive number, got {eps!r}")
    return dict(d_model=d, n_heads=h, d_head=d // h, n_layers=ints["num_hidden_layers"],
                d_ff=ints["intermediate_size"], d_vocab=ints["vocab_size"], n_ctx=ints["max_position_embeddings"],
                ln_eps=float(eps), qkv_bias=True)


def expected_shapes(o: dict[str, Any], pooler: bool = True) -> dict[str, tuple[int, ...]]:
    """Every BertModel tensor (no prefix) and the shape the options imply for it."""
    d, f = o["d_model"], o["d_ff"]
    out = {"embeddings.word_embeddings.weight": (o["d_vocab"], d), "embeddings.position_embeddings.weight":
           (o["n_ctx"], d), "embeddings.token_type_embeddings.weight": (TOKEN_TYPES, d),
           "embeddings.LayerNorm.weight": (d,), "embeddings.LayerNorm.bias": (d,)}
    for i in range(o["n_layers"]):
        p = f"encoder.layer.{i}."
        for s in ("query", "key", "value"):
            out.update({p + f"attention.self.{s}.weight": (d, d), p + f"attention.self.{s}.bias": (d,)})
        out.update({p + "attention.output.dense.weight": (d, d), p + "attention.output.dense.bias": (d,),
                    p + "attention.output.LayerNorm.weight": (d,), p + "attention.output.LayerNorm.bias": (d,),
                    p + "intermediate.dense.weight": (f, d), p + "intermediate.dense.bias": (f,),
                    p + "output.dense.weight": (d, f), p + "output.dense.bias": (d,),
                    p + "output.LayerNorm.weight": (d,), p + "output.LayerNorm.bias": (d,)})
    if pooler:
        out.update({"pooler.dense.weight": (d, d), "pooler.dense.bias": (d,)})
    return out


def short_name(name: str) -> str | None:
    """A stored tensor's BertModel name: the ``bert.`` prefix dropped, ``gamma``/``beta`` read as weight/bias;
    None for what the engine leaves out (the buffers, the pretraining heads ``cls.*``)."""
    name = name.removeprefix("bert.")
    if name.startswith("cls.") or name in _BUFFERS:
        return None
    head, _, tail = name.rpartition(".")
    return f"{head}.{_OLD_NAMES.get(tail, tail)}" if head else name


def to_engine(get: Callable[[str], Any], o: dict[str, Any], pooler: bool = True) -> dict[str, Any]:
    """The engine's parameters from BertModel's tensors (``get(name)`` gives one as float64)."""
    import numpy as np  # lazy: numpy off the shape path (opening a folder reads its config only)

    d, h, m = o["d_model"], o["n_heads"], o["d_head"]
    e = "embeddings."
    p = {"W_E": get(e + "word_embeddings.weight"), "W_pos": get(e + "position_embeddings.weight"),
         "W_type": get(e + "token_type_embeddings.weight"), "embed_ln.w": get(e + "LayerNorm.weight"),
         "embed_ln.b": get(e + "LayerNorm.bias")}
    for i in range(o["n_layers"]):
        hf, ours = f"encoder.layer.{i}.", f"blocks.{i}."
        for s, theirs in (("Q", "query"), ("K", "key"), ("V", "value")):
            w = get(hf + f"attention.self.{theirs}.weight")  # [h·m, d]: head j is rows j·m … j·m + m − 1
            p[ours + f"attn.W_{s}"] = np.ascontiguousarray(w.reshape(h, m, d).transpose(0, 2, 1))
            p[ours + f"attn.b_{s}"] = get(hf + f"attention.self.{theirs}.bias").reshape(h, m)
        for name, theirs in (("attn.W_O", "attention.output.dense"), ("mlp.W_in", "intermediate.dense"),
                             ("mlp.W_out", "output.dense")):
            p[ours + name] = np.ascontiguousarray(get(hf + theirs + ".weight").T)
            p[ours + name.replace("W_", "b_")] = get(hf + theirs + ".bias")
        for ln, theirs in (("ln1", "attention.output.LayerNorm"), ("ln2", "output.LayerNorm")):
            p[ours + f"{ln}.w"], p[ours + f"{ln}.b"] = get(hf + theirs + ".weight"), get(hf + theirs + ".bias")
    if pooler:
        p["pooler.W"], p["pooler.b"] = np.ascontiguousarray(get("pooler.dense.weight").T), get("pooler.dense.bias")
    else:  # BertForMaskedLM has none; the sentence head never reads it
        p["pooler.W"], p["pooler.b"] = np.zeros((d, d)), np.zeros(d)
    return p


class BertCheckpoint(GPT2Checkpoint):
    """A BERT folder: its config as ``bert`` options, its WordPiece tokenizer.json, its weights."""

    model = "bert"
    special_tokens = True  # [CLS] … [SEP], as the post-processor of its tokenizer.json says

    def __init__(self, path: Path, config: dict[str, Any]) -> None:
        self.path, self.config = path, config
        self.options = bert_options(config, f"'{path / CONFIG}'")
        check_caps(self.options)
        self.weights_path = path / WEIGHTS
        self.found: dict[str, str] = {}  # BertModel name -> stored name; empty: a config.json alone
        self.pooler = True
        if self.weights_path.is_file():
            table = header_table(self.weights_path)
            self.pooler = any(short_name(k) == "pooler.dense.weight" for k in table)
            self.found = check_tensors(table, expected_shapes(self.options, self.pooler), self._says(),
                                       short=short_name, stored=lambda s: s,
                                       where=lambda k: f"'{self.weights_path}'", missing_where=f"'{self.weights_path}'")
        tok = path / TOKENIZER
        self.tokenizer_path = tok if tok.is_file() else None
        self._labels = None
        self._tokenizer = None
        self._words = None
        self.unknown: list[str] = []
        self._params = None

    def __repr__(self) -> str:
        return f"BertCheckpoint('{self.path}', {self.options})"

    def _says(self) -> str:
        """config.json's sizes, as an error names them."""
        o = self.options
        return (f"num_hidden_layers {o['n_layers']}, hidden_size {o['d_model']}, intermediate_size {o['d_ff']}, "
                f"vocab_size {o['d_vocab']}, max_position_embeddings {o['n_ctx']}")

    def pad_id(self) -> int:
        """config.json's pad_token_id ([PAD], 0 in BERT's vocabularies)."""
        v = self.config.get("pad_token_id")
        return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < self.options["d_vocab"] else 0

    def params(self) -> dict[str, Any]:
        if not self.found:
            raise InputError(f"checkpoint folder '{self.path}' has no {WEIGHTS}: 'explain shapes' reads its "
                             "config.json alone, a run needs the weights")
        if self._params is None:
            self._params = self._load()
        return self._params

    def _load(self) -> dict[str, Any]:
        """Every tensor as float64 (present, its shape and a float type were checked on opening)."""
        import numpy as np  # lazy: numpy off the shape path

        try:
            from safetensors import safe_open  # lazy: optional dependency (the checkpoint extra)
        except ImportError:
            raise DependencyError(f"reading {WEIGHTS} needs the 'safetensors' package: {INSTALL}") from None
        try:
            f = safe_open(str(self.weights_path), framework="numpy")
        except Exception as exc:  # the parser's own errors (bad header, truncated file)
            msg = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise WeightsError(f"cannot read '{self.weights_path}': {msg}; it must be a whole safetensors file") \
                from None

        def get(short: str) -> Any:
            k = self.found[short]
            arr = (read_bf16(self.weights_path, k) if f.get_slice(k).get_dtype() == "BF16" else f.get_tensor(k))
            arr = arr.astype(np.float64)
            if not np.isfinite(arr).all():
                raise WeightsError(f"tensor '{self.found[short]}' in '{self.weights_path}' contains NaN or infinite "
                                   "values")
            return arr

        with f:
            return to_engine(get, self.options, self.pooler)


__all__ = ["BertCheckpoint", "MODEL_TYPES", "bert_options", "expected_shapes", "short_name", "to_engine"]
