"""GGUF files of the llama architecture (llama.cpp's format; SmolLM2, TinyLlama, Llama 2/3 …) opened as the
engine's ``llama`` (and, through the subclass of :mod:`explain.checkpoints.gguf_gemma`, the gemma3 architecture).

Opening reads the metadata only (:mod:`explain.checkpoints.gguf_file`: the file is memory-mapped; no tensor is
touched), so ``explain shapes`` stays light. On first use every tensor is dequantized (:func:`explain.checkpoints.gguf_file.to_float64`: Q8_0
directly in float64, the other types with ``gguf.quants.dequantize``: F32, F16, BF16, Q4_0, Q4_1, the K-quants …)
and mapped to Hugging Face's names, then to the engine's (:func:`explain.checkpoints.llama.to_engine`).

llama.cpp's converter stores the q and k weights permuted for its interleaved RoPE (pairs (2i, 2i+1)): within
each head's d rows, Hugging Face's row i (i < d/2) sits at row 2i and row i + d/2 at row 2i + 1. The engine's
RoPE is Hugging Face's rotate-half, so :func:`unpermute` puts the rows back (per head: the query heads for q,
the key/value heads for k). Left permuted, the model would still run and quietly predict worse.

A GGUF holds its tokenizer as a vocabulary and merges, and names its pre-tokenizer (``tokenizer.ggml.pre``)
without its rules: the names explain knows are mapped to ``tokenizers`` pre-tokenizers
(:mod:`explain.checkpoints.gguf_vocab`); any other name is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from explain.checkpoints.gguf_file import to_float64
from explain.checkpoints.gguf_vocab import (
    PRE_TOKENIZERS,
    as_json,
    bpe_merges,
    byte_level_bpe,
    pre_tokenizer,
    text_chars,
)
from explain.checkpoints.gpt2 import DependencyError, GPT2Checkpoint
from explain.checkpoints.keys import capped
from explain.checkpoints.llama import to_engine
from explain.checkpoints.token_labels import byte_decoder, visible_token
from explain.core import progress
from explain.core.errors import ExplainError, InputError, WeightsError
from explain.core.text import RowLabels
from explain.trace.origin import Unexplained, WeightOrigins, WeightSource, explain_weight

INSTALL = "pip install gguf tokenizers (explain's default install has them)"
# GGUF tensor name (per block under blk.N.) -> Hugging Face's (under model.layers.N.)
_BLOCK = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
          "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
          "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
_GLOBAL = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_NORMS = {"ln1": "attn_norm", "ln2": "ffn_norm", "ln_final": "output_norm"}  # engine's RMSNorm -> GGUF's tensor


def unpermute(w: Any, n_heads: int) -> Any:
    """Undo llama.cpp's q/k permutation: in each head's d rows, stored row 2i is Hugging Face's row i and
    stored row 2i + 1 is row i + d/2. ``w`` is [n_heads·d, …]."""
    rows, *rest = w.shape
    d = rows // n_heads
    return w.reshape(n_heads, d // 2, 2, *rest).swapaxes(1, 2).reshape(w.shape)


def _f32(v: float) -> float:
    """A float32 metadata value as the decimal it was written from (1e-05, not 9.999999747378752e-06): the
    shortest text that reads back to the same float32."""
    return float(str(np.float32(v)))


def bounded_number(where: str, key: str, v: Any, default: float, low: float, high: float) -> float:
    """A float metadata value (``default`` when absent) inside (low, high), or a one-line error naming the key."""
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not low < float(v) < high:
        raise WeightsError(f"{where}: {key} must be a number above {low:g} and below {high:g}, got {str(v)[:40]!r}")
    return _f32(v)


def field_of(reader: Any, key: str, default: Any = None) -> Any:
    return reader.get(key, default)


class GGUFCheckpoint(GPT2Checkpoint):
    """A llama-architecture GGUF file: its metadata as ``llama`` options, its tokenizer, its weights."""

    model = "llama"
    BLOCK, GLOBAL, NORMS = _BLOCK, _GLOBAL, _NORMS  # its tensor names (a subclass has its own)
    permuted = True  # q/k rows stored permuted for interleaved RoPE (llama.cpp's LlamaModel.permute)

    def __init__(self, path: Path, reader: Any) -> None:
        self.path, self.reader = path, reader
        self.tensors = {t.name: t for t in reader.tensors}
        self.options = self.read_options(f"'{path}'")
        self.config = {"eos_token_id": field_of(reader, "tokenizer.ggml.eos_token_id")}
        self.tokenizer_path = None
        self._labels = None
        self._tokenizer = None
        self._params = None

    def read_options(self, where: str) -> dict[str, Any]:
        """The engine's options from the llama.* metadata, or a one-line error naming the key."""
        reader = self.reader
        get = lambda key: field_of(reader, f"llama.{key}")  # noqa: E731
        ints = {}
        for key in ("embedding_length", "attention.head_count", "block_count", "feed_forward_length",
                    "context_length"):
            v = get(key)
            if not isinstance(v, int) or v < 1:
                raise WeightsError(f"{where}: llama.{key} must be a positive whole number, got {v!r}")
            ints[key] = capped(where, f"llama.{key}", v)
        d, h = ints["embedding_length"], ints["attention.head_count"]
        kv = get("attention.head_count_kv") or h
        if not isinstance(kv, int) or kv < 1 or h % kv:
            raise WeightsError(f"{where}: {h} heads cannot share {kv!r} key/value heads equally")
        emb = self.tensors.get("token_embd.weight")
        if emb is None:
            raise WeightsError(f"{where} has no tensor 'token_embd' (the token embedding)")
        scaling = get("rope.scaling.type")
        if scaling not in (None, "none"):
            raise WeightsError(f"{where} uses rope scaling {scaling!r}; explain computes the default rotary "
                               "embedding only")
        m = get("rope.dimension_count") or d // h
        if m != d // h:
            raise WeightsError(f"{where}: rope.dimension_count {m} is not the head width {d // h}; explain rotates "
                               "every dimension of a head")
        return dict(d_model=d, n_heads=h, n_kv_heads=kv, d_head=d // h, n_layers=ints["block_count"],
                    d_ff=ints["feed_forward_length"], d_vocab=int(emb.shape[1]), n_ctx=ints["context_length"],
                    rope_theta=bounded_number(where, "llama.rope.freq_base", get("rope.freq_base"), 10000.0, 1, 1e12),
                    ln_eps=bounded_number(where, "llama.attention.layer_norm_rms_epsilon",
                                   get("attention.layer_norm_rms_epsilon"), 1e-5, 0, 1),
                    qkv_bias="blk.0.attn_q.bias" in self.tensors, tie_embeddings="output.weight" not in self.tensors)

    # -- tokenizer ----------------------------------------------------------------------------------------------
    def _tokens(self) -> list[str]:
        tokens = field_of(self.reader, "tokenizer.ggml.tokens")
        if tokens is None or not len(tokens):
            raise InputError(f"'{self.path}' holds no tokenizer.ggml.tokens; give --tokens (ids)")
        if not isinstance(tokens, list):  # an array of numbers where the words should be
            raise InputError(f"'{self.path}': tokenizer.ggml.tokens[0] is a number, not text; give --tokens (ids)")
        if len(tokens) > self.options["d_vocab"]:  # ids past the embedding's rows could never be looked up
            raise InputError(f"'{self.path}' holds {len(tokens):,} tokens but token_embd has {self.options['d_vocab']:,} "
                             "rows; the file is not a whole model: give --tokens (ids)")
        if (bad := next((i for i, t in enumerate(tokens) if not isinstance(t, str)), None)) is not None:
            raise InputError(f"'{self.path}': tokenizer.ggml.tokens[{bad}] is {type(tokens[bad]).__name__}, not "
                             "text; give --tokens (ids)")
        return tokens

    def _merges(self) -> list[tuple[str, str]]:
        return bpe_merges(f"'{self.path}'", field_of(self.reader, "tokenizer.ggml.merges", []))

    def _token_labels(self) -> dict[int, str]:
        if self._labels is None:
            dec = byte_decoder()
            labels = {}
            for i, t in enumerate(self._tokens()):
                raw = bytes(dec[c] for c in t) if all(c in dec for c in t) else t.encode()
                labels[i] = visible_token(raw.decode("utf-8", errors="backslashreplace"))
            self._labels = labels
        return self._labels

    def vocab_labels(self) -> Any:
        return RowLabels(self._token_labels(), self.options["d_vocab"])

    def encode(self, text: str) -> list[int]:
        """Token ids from the tokenizer the file describes: byte-level BPE from its vocabulary and merges."""
        if self._tokenizer is None:
            self._tokenizer = self._build_tokenizer()
        return list(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def _build_tokenizer(self) -> Any:
        where = f"'{self.path}'"
        kind = field_of(self.reader, "tokenizer.ggml.model")
        if kind != "gpt2":
            raise InputError(f"{where} holds a {kind!r} tokenizer; explain rebuilds byte-level BPE ('gpt2') only: "
                             "give --tokens (ids)")
        try:
            from tokenizers import Tokenizer, decoders, models  # lazy: optional dependency (the gguf extra)
        except ImportError:
            raise DependencyError(f"reading text with a GGUF's tokenizer needs 'tokenizers': {INSTALL}") from None
        pre = pre_tokenizer(str(field_of(self.reader, "tokenizer.ggml.pre", "gpt-2")), where)
        return byte_level_bpe(where, self._tokens(), self._merges(), pre, Tokenizer, models, decoders)

    def tokenizer_fields(self) -> tuple[Any, str, list[str], list[str]]:
        """What the file says of its tokenizer: (tokenizer.ggml.model, .pre, .tokens, .merges), as stored;
        explain tokenize walks through it (:mod:`explain.tokenize.source`)."""
        merges = field_of(self.reader, "tokenizer.ggml.merges", [])
        return (field_of(self.reader, "tokenizer.ggml.model"), str(field_of(self.reader, "tokenizer.ggml.pre", "gpt-2")),
                self._tokens(), list(merges) if isinstance(merges, list) else [])

    def sentencepiece_json(self, text: str) -> dict[str, Any] | None:
        """A SentencePiece vocabulary (``tokenizer.ggml.model`` llama: Gemma's) as a tokenizer.json document for
        the characters of ``text`` (:func:`explain.checkpoints.gguf_vocab.as_json`); None for a byte-level BPE file.
        explain tokenize walks it."""
        if field_of(self.reader, "tokenizer.ggml.model") != "llama":
            return None
        tokens, types = self._tokens(), field_of(self.reader, "tokenizer.ggml.token_type")
        if types is None or len(types) != len(tokens):
            raise InputError(f"'{self.path}' has no tokenizer.ggml.token_type for its {len(tokens)} pieces")
        return as_json(tokens, [int(t) for t in types], text_chars(text))

    # -- weights ------------------------------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        if self._params is None:  # a bar on a terminal: SmolLM2's 272 tensors take about 4 s
            with progress.task(f"dequantize {self.path.name}", len(self.tensors), unit="tensors") as advance:
                def tensor(hf: str) -> Any:
                    arr = self._hf_tensor(hf)
                    advance(1)
                    return arr

                self._params = self.engine(tensor)
        return self._params

    def engine(self, get: Any) -> dict[str, Any]:
        return to_engine(get, self.options)

    def _hf_tensor(self, hf: str) -> Any:
        """One tensor by its Hugging Face name, dequantized to float64 [out, in], q/k rows un-permuted."""
        name, o = self._gguf_name(hf), self.options
        t = self.tensors.get(name)
        if t is None:
            raise WeightsError(f"'{self.path}' has no tensor '{name}'")
        try:  # a damaged scale is NaN or inf: refused below in one line, no numpy warning printed over it
            with np.errstate(all="ignore"):  # the engine reads every matrix but the embedding transposed
                arr = to_float64(t, transposed=name != "token_embd.weight")
        except Exception as exc:  # an unknown type or a block that does not fit: the file is not whole
            raise WeightsError(f"cannot dequantize '{name}' ({t.tensor_type.name}) in '{self.path}': {exc}") from None
        with np.errstate(all="ignore"):  # a sum is NaN or inf when a value is (or finite ones overflow: look then)
            if not np.isfinite(arr.sum()) and not np.isfinite(arr).all():
                raise WeightsError(f"tensor '{name}' in '{self.path}' contains NaN or infinite values")
        if self.permuted and name.endswith("attn_q.weight"):
            arr = unpermute(arr, o["n_heads"])
        elif self.permuted and name.endswith("attn_k.weight"):
            arr = unpermute(arr, o["n_kv_heads"])
        return arr

    def weight_source(self, name: str) -> WeightSource:
        """Where parameter ``name`` sits in the file (:class:`~explain.trace.origin.WeightSource`), or a one-line
        refusal for a name that is no weight matrix or norm of the file."""
        parts = name.split(".")
        norm = self.NORMS.get(parts[-2] if len(parts) >= 2 and parts[-1] == "w" else "")
        heads = False
        if norm is not None:  # an RMSNorm's gain: one value per column, stored as a vector
            tensor, cells = (f"blk.{parts[1]}." if parts[0] == "blocks" else "") + norm + ".weight", "vector"
        elif name == "W_E":
            tensor, cells = "token_embd.weight", "rows"
        elif name == "unembed.W_U":
            tensor, cells = "output.weight", "columns"
        elif len(parts) == 4 and parts[0] == "blocks" and parts[2] in ("attn", "mlp"):
            blk, what = f"blk.{parts[1]}.", parts[3]
            if what in ("W_Q", "W_K", "W_V"):  # Hugging Face's rows; q and k are stored permuted for interleaved RoPE
                tensor, cells = blk + {"W_Q": "attn_q", "W_K": "attn_k", "W_V": "attn_v"}[what] + ".weight", "heads"
                heads = what != "W_V" and self.permuted
            else:
                gguf = {"W_O": "attn_output", "W_gate": "ffn_gate", "W_in": "ffn_up", "W_out": "ffn_down"}.get(what)
                if gguf is None:
                    raise InputError(f"'{name}' is not a weight matrix of this GGUF file")
                tensor, cells = blk + gguf + ".weight", "columns"
        else:
            raise InputError(f"'{name}' is no weight matrix or norm of '{self.path}'")
        t = self.tensors.get(tensor)
        if t is None:
            raise InputError(f"'{name}' is no weight of '{self.path}'")
        return WeightSource(name, str(self.path), tensor, t.tensor_type.name, t.data, cells,  # type: ignore[arg-type]
                            d_head=self.options["d_head"], permuted=heads)

    def weight_origins(self, names: Iterable[str]) -> WeightOrigins:
        """Where each parameter of ``names`` came from in the file, or why it does not say (:attr:`Trace.origin`)."""
        sources: dict[str, WeightSource | Unexplained] = {}
        for name in names:
            try:
                sources[name] = self.weight_source(name)
            except ExplainError as exc:
                sources[name] = Unexplained(name, str(exc))
        return WeightOrigins(str(self.path), MappingProxyType(sources))

    def weight_origin(self, name: str, index: tuple[int, ...]) -> Any:
        """Where the float of parameter ``name`` at ``index`` came from in the file: its stored row, block, scale,
        offset and integer (a :class:`~explain.ops.base.CellExplanation`), for a quantized tensor; for a float one
        (F32, F16: the norms), that it is read as is. Refused in one line for another weight or tensor type."""
        return explain_weight(self.weight_source(name), tuple(index))

    def _gguf_name(self, hf: str) -> str:
        base, kind = hf.rsplit(".", 1)
        if base.startswith("model.layers."):
            i, rest = base[len("model.layers."):].split(".", 1)
            return f"blk.{i}.{next(g for g, h in self.BLOCK.items() if h == rest)}.{kind}"
        return f"{next(g for g, h in self.GLOBAL.items() if h == base)}.{kind}"


_OPENED: dict[tuple[str, int, int], GGUFCheckpoint] = {}


def open_gguf(path: Path) -> GGUFCheckpoint:
    """Open a GGUF file: its header and metadata (memory-mapped; no tensor data read). The same unchanged file
    asked for again in this process (the CLI picks the model from it, then runs it) is opened once."""
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _OPENED:
        _OPENED.clear()  # one model at a time: its weights are a gigabyte once read
        _OPENED[key] = _open(path)
    return _OPENED[key]


def _open(path: Path) -> GGUFCheckpoint:
    try:
        import gguf  # noqa: F401  # lazy: optional dependency (the gguf extra): its type tables and dequantize
    except ImportError:
        raise DependencyError(f"reading a GGUF file needs the 'gguf' package: {INSTALL}") from None
    from explain.checkpoints.gguf_file import GGUFFile  # lazy: numpy and gguf's tables only for GGUF files
    from explain.checkpoints.gguf_gemma import GemmaGGUF  # lazy: it builds on this module

    reader = GGUFFile(path)
    arch = reader.get("general.architecture")
    kinds = {"llama": GGUFCheckpoint, "gemma3": GemmaGGUF}
    if arch not in kinds:
        raise WeightsError(f"'{path}' is a GGUF of architecture {arch!r}; explain reads the "
                           f"{' and '.join(repr(k) for k in kinds)} architectures")
    return kinds[arch](path, reader)


__all__ = ["GGUFCheckpoint", "open_gguf", "unpermute", "pre_tokenizer", "PRE_TOKENIZERS"]
