"""GGUF files of the gemma3 architecture (llama.cpp's conversion of Gemma 3's text decoder) opened as the engine's
``gemma``: :class:`explain.checkpoints.gguf.GGUFCheckpoint` with Gemma's tensor names, its norms and its
SentencePiece vocabulary.

- Every norm weight is stored as 1 + w (llama.cpp's converter adds the 1 that Gemma's RMSNorm adds at run time):
  the reader takes the 1 off, so the engine adds it once. Adding it twice (a gain of 2 + w) turns the model
  into noise, quietly.
- q and k are stored as Hugging Face has them (llama.cpp rotates halves for gemma3): nothing to un-permute.
- What a gemma3 GGUF does not store is llama.cpp's to assume, and the run says so in its notes (``assumed``):
  the layer pattern (a full layer every 6th, unless ``gemma3.attention.sliding_window_pattern`` says), the sliding
  layers' θ (10,000, unless ``gemma3.rope.freq_base_swa``) and the attention scale (head_dim^-½, unless
  ``gemma3.attention.scale``). Each of them may be given as an option instead (Gemma 3 27B's scale is 168^-½).
- The vocabulary is SentencePiece's (``tokenizer.ggml.model`` = ``llama``), rebuilt as Hugging Face rebuilds it
  (:func:`explain.checkpoints.gguf_vocab.build`), with ``<bos>`` first when ``tokenizer.ggml.add_bos_token``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from explain.checkpoints.gemma import to_engine
from explain.checkpoints.gguf import DependencyError, GGUFCheckpoint, bounded_number, field_of
from explain.checkpoints.gguf_vocab import build, text_chars
from explain.checkpoints.token_labels import visible_token
from explain.core.errors import InputError, WeightsError
from explain.core.window import FULL, GEMMA_PATTERN, SLIDING, pattern_kinds
from explain.trace.origin import WeightSource

INSTALL = "pip install gguf tokenizers (explain's default install has them)"
LOCAL_THETA = 10000.0  # llama.cpp's rope_freq_base_train_swa for gemma3
_BLOCK = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
          "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
          "attn_k_norm": "self_attn.k_norm", "post_attention_norm": "post_attention_layernorm",
          "ffn_norm": "pre_feedforward_layernorm", "post_ffw_norm": "post_feedforward_layernorm",
          "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
_GLOBAL = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_NORMS = {"ln1": "attn_norm", "ln1_post": "post_attention_norm", "ln2": "ffn_norm", "ln2_post": "post_ffw_norm",
          "ln_final": "output_norm", "q_norm": "attn_q_norm", "k_norm": "attn_k_norm"}
ASSUMED = {  # an option the file may not store -> what llama.cpp assumes, as the notes say it
    "layer_types": "llama.cpp's gemma3 pattern, a full layer every 6th",
    "rope_local_base_freq": "llama.cpp's 10,000 for gemma3's sliding layers",
    "query_pre_attn_scalar": "head_dim, llama.cpp's scale head_dim^-½"}


class PieceLabels(Mapping):
    """id → a SentencePiece piece's label (``▁`` and white space made visible), made when asked for: 262,144
    labels made at once took 2 s (6 s under load), and a run shows a few dozen."""

    def __init__(self, pieces: list[str]) -> None:
        self._pieces = pieces
        self._made: dict[int, str] = {}

    def __getitem__(self, i: int) -> str:
        try:
            i = operator.index(i)  # numpy's integers too
        except TypeError:
            raise KeyError(i) from None
        if not 0 <= i < len(self._pieces):
            raise KeyError(i)
        if i not in self._made:
            self._made[i] = visible_token(self._pieces[i])
        return self._made[i]

    def __len__(self) -> int:
        return len(self._pieces)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self._pieces)))


class GemmaGGUF(GGUFCheckpoint):
    """A gemma3-architecture GGUF file: its metadata as ``gemma`` options, its SentencePiece tokenizer, its
    weights (norms less the 1 the file adds)."""

    model = "gemma"
    BLOCK, GLOBAL, NORMS = _BLOCK, _GLOBAL, _NORMS
    permuted = False

    def read_options(self, where: str) -> dict[str, Any]:
        get = lambda key: field_of(self.reader, f"gemma3.{key}")  # noqa: E731
        ints = {}
        for key in ("embedding_length", "attention.head_count", "block_count", "feed_forward_length",
                    "context_length", "attention.sliding_window"):
            v = get(key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise WeightsError(f"{where}: gemma3.{key} must be a positive whole number, got {v!r}")
            ints[key] = v
        d, h, n = ints["embedding_length"], ints["attention.head_count"], ints["block_count"]
        kv = get("attention.head_count_kv") or h
        if not isinstance(kv, int) or kv < 1 or h % kv:
            raise WeightsError(f"{where}: {h} heads cannot share {kv!r} key/value heads equally")
        m = get("attention.key_length") or d // h
        if not isinstance(m, int) or m < 2 or m % 2 or get("attention.value_length") not in (None, m):
            raise WeightsError(f"{where}: gemma3.attention.key_length {m!r} must be an even width equal to "
                               "value_length")
        for key in ("attn_logit_softcapping", "final_logit_softcapping"):
            if get(key):
                raise WeightsError(f"{where} stores gemma3.{key} {get(key)!r} (Gemma 2's soft-capping); explain's "
                                   "gemma computes Gemma 3, which has none")
        if get("rope.scaling.type") not in (None, "none"):
            raise WeightsError(f"{where} uses rope scaling {get('rope.scaling.type')!r}; explain computes the "
                               "default rotary embedding only")
        emb = self.tensors.get("token_embd.weight")
        if emb is None:
            raise WeightsError(f"{where} has no tensor 'token_embd' (the token embedding)")
        self.assumed = []
        local = get("rope.freq_base_swa")
        if local is None:
            self.assumed.append("rope_local_base_freq")
        kinds = self._kinds(get("attention.sliding_window_pattern"), n, where)
        scale = get("attention.scale")
        if scale is None:
            self.assumed.append("query_pre_attn_scalar")
            scalar = m
        else:
            scalar = bounded_number(where, "gemma3.attention.scale", scale, 0, 0, 1)
            scalar = round(1 / scalar ** 2)
            if not scalar >= 1 or not math.isclose(1 / math.sqrt(scalar), float(scale), rel_tol=1e-6):
                raise WeightsError(f"{where}: gemma3.attention.scale {float(scale):g} is not 1/√N for a whole N; "
                                   "explain scales by query_pre_attn_scalar^-½")
        return dict(d_model=d, n_heads=h, n_kv_heads=kv, d_head=m, n_layers=n, d_ff=ints["feed_forward_length"],
                    d_vocab=int(emb.shape[1]), n_ctx=ints["context_length"],
                    rope_theta=bounded_number(where, "gemma3.rope.freq_base", get("rope.freq_base"), 1000000.0, 1, 1e12),
                    rope_local_base_freq=bounded_number(where, "gemma3.rope.freq_base_swa", local, LOCAL_THETA, 1, 1e12),
                    sliding_window=ints["attention.sliding_window"], layer_types=kinds, query_pre_attn_scalar=scalar,
                    ln_eps=bounded_number(where, "gemma3.attention.layer_norm_rms_epsilon",
                                   get("attention.layer_norm_rms_epsilon"), 1e-6, 0, 1),
                    tie_embeddings="output.weight" not in self.tensors, assumed=",".join(self.assumed))

    def _kinds(self, pattern: Any, n: int, where: str) -> str:
        """The layer kinds: the stored pattern (a period, or a flag per layer: true = sliding), else llama.cpp's."""
        if pattern is None:
            self.assumed.append("layer_types")
            return ",".join(pattern_kinds(n, GEMMA_PATTERN))
        if isinstance(pattern, int) and not isinstance(pattern, bool) and pattern >= 1:
            return ",".join(pattern_kinds(n, pattern))
        flags = list(pattern) if not isinstance(pattern, (str, bytes)) else []
        if len(flags) != n or not all(str(f) in ("True", "False", "0", "1") for f in flags):
            raise WeightsError(f"{where}: gemma3.attention.sliding_window_pattern must be a period or one flag per "
                               f"layer ({n}), got {str(pattern)[:40]}")
        return ",".join(SLIDING if bool(int(f)) else FULL for f in flags)

    # -- weights --------------------------------------------------------------------------------------------------
    def engine(self, get: Any) -> dict[str, Any]:
        return to_engine(get, self.options)

    def _hf_tensor(self, hf: str) -> Any:
        arr = super()._hf_tensor(hf)
        return arr - 1.0 if hf.endswith("norm.weight") else arr  # stored 1 + w: the engine adds the 1

    def weight_source(self, name: str) -> WeightSource:
        return replace(super().weight_source(name), plus_one=name.endswith(".w"))  # a norm's gain: stored 1 + w

    # -- tokenizer ------------------------------------------------------------------------------------------------
    def _sentencepiece(self) -> bool:
        return field_of(self.reader, "tokenizer.ggml.model") == "llama"

    def _token_labels(self) -> Any:
        if self._labels is None and self._sentencepiece():
            self._labels = PieceLabels(self._tokens())
        return super()._token_labels()

    def bos(self) -> int | None:
        """<bos>'s id when the file says to put it first (``add_bos_token``; llama.cpp's default for a
        SentencePiece vocabulary: yes)."""
        bos = field_of(self.reader, "tokenizer.ggml.bos_token_id")
        add = field_of(self.reader, "tokenizer.ggml.add_bos_token", self._sentencepiece())
        return bos if add is True and isinstance(bos, int) and 0 <= bos < self.options["d_vocab"] else None

    def encode(self, text: str) -> list[int]:
        bos = self.bos()
        if self._sentencepiece() and not text_chars(text) <= self._chars:  # a character the last one was not for
            self._chars = self._chars | text_chars(text)
            self._tokenizer = None
        return ([] if bos is None else [bos]) + super().encode(text)

    _chars: frozenset[str] = frozenset()  # the characters the tokenizer was built for (gguf_vocab.build)

    def _build_tokenizer(self) -> Any:
        if not self._sentencepiece():
            return super()._build_tokenizer()
        types = field_of(self.reader, "tokenizer.ggml.token_type")
        tokens = self._tokens()
        if types is None or len(types) != len(tokens):
            raise InputError(f"'{self.path}' has no tokenizer.ggml.token_type for its {len(tokens)} pieces; give "
                             "--tokens (ids)")
        try:
            return build(tokens, [int(t) for t in types], chars=set(self._chars))
        except ImportError:
            raise DependencyError(f"reading text with a GGUF's tokenizer needs 'tokenizers': {INSTALL}") from None


__all__ = ["ASSUMED", "GemmaGGUF"]
