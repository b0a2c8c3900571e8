"""Gemma 3 checkpoints in a Hugging Face folder (``model_type`` gemma3_text: ``Gemma3ForCausalLM``), opened as the
engine's ``gemma``, through the Llama family's folder reader (:class:`explain.checkpoints.llama.LlamaCheckpoint`:
the safetensors files, their index and headers, the tokenizer.json) with Gemma's config and tensor names.

Both spellings of the config: transformers 4's top-level ``rope_theta`` (the full layers'), ``rope_local_base_freq``
(the sliding layers') and ``sliding_window_pattern`` (a full layer every Nth), and transformers 5's
``layer_types`` and ``rope_parameters`` per kind (``{"sliding_attention": {"rope_theta": 10000.0}, …}``). The
tensors map onto the engine's parameters like this (linear weights [out, in], transposed)::

    model.embed_tokens.weight [V, d]                     W_E (× √d_model in the run)
    model.layers.N.input_layernorm / post_attention_layernorm / pre_feedforward_layernorm /
        post_feedforward_layernorm .weight [d]           blocks.N.ln1 / ln1_post / ln2 / ln2_post .w (gain 1 + w)
    model.layers.N.self_attn.q_proj / k_proj / v_proj    blocks.N.attn.W_Q / W_K / W_V (heads, d, d_head)
    model.layers.N.self_attn.q_norm / k_norm .weight     blocks.N.attn.q_norm.w / k_norm.w [d_head]
    model.layers.N.self_attn.o_proj, mlp.gate_proj / up_proj / down_proj   W_O, W_gate, W_in, W_out
    model.norm.weight, lm_head.weight (absent: tied)     ln_final.w, unembed.W_U

What the engine does not compute is refused in one line naming it: soft-capping (Gemma 2's), a rope scaling type,
attention biases, bidirectional attention, an activation other than GELU's tanh approximation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explain.checkpoints.gpt2 import read_checkpoint_json
from explain.checkpoints.llama import LlamaCheckpoint, layer_types
from explain.core.errors import WeightsError
from explain.core.window import GEMMA_PATTERN, pattern_kinds

MODEL_TYPES = ("gemma3_text",)
ACTIVATIONS = ("gelu_pytorch_tanh", "gelu_new")  # both GELU's tanh approximation (explain.ops.kernels.gelu)
NORMS = {"ln1": "input_layernorm", "ln1_post": "post_attention_layernorm", "ln2": "pre_feedforward_layernorm",
         "ln2_post": "post_feedforward_layernorm", "attn.q_norm": "self_attn.q_norm", "attn.k_norm": "self_attn.k_norm"}
_DEFAULTS = dict(max_position_embeddings=131072, head_dim=256, query_pre_attn_scalar=256, sliding_window=4096,
                 rope_theta=1000000.0, rope_local_base_freq=10000.0)  # Gemma3TextConfig's own


def _number(cfg: dict[str, Any], key: str, where: str, whole: bool = True) -> Any:
    v = cfg.get(key, _DEFAULTS.get(key))
    ok = isinstance(v, int) if whole else isinstance(v, (int, float))
    if not ok or isinstance(v, bool) or not v >= 1:
        raise WeightsError(f"{where}: {key} must be a positive {'whole ' if whole else ''}number, got {v!r}")
    return v


def _theta(block: Any, key: str, where: str, default: float) -> float:
    """One kind's θ from its rope parameters (a scaling type refused in one line)."""
    if block is None:
        return default
    if not isinstance(block, dict):
        raise WeightsError(f"{where}: {key} must be a table such as {{\"rope_type\": \"default\"}}, got "
                           f"{str(block)[:40]!r}")
    kind = block.get("rope_type", block.get("type", "default"))
    if kind != "default":
        raise WeightsError(f"{where} uses rope scaling {kind!r} ({key}); explain computes the default rotary "
                           "embedding only")
    theta = block.get("rope_theta", default)
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 1 < theta < 1e12:
        raise WeightsError(f"{where}: {key}'s rope_theta must be a number above 1 and below 1e12, got {theta!r}")
    return float(theta)


def rope_thetas(cfg: dict[str, Any], where: str) -> tuple[float, float]:
    """(full layers' θ, sliding layers' θ) from either spelling."""
    full, local = cfg.get("rope_theta", _DEFAULTS["rope_theta"]), cfg.get("rope_local_base_freq",
                                                                             _DEFAULTS["rope_local_base_freq"])
    params = cfg.get("rope_parameters")
    if isinstance(params, dict) and ("full_attention" in params or "sliding_attention" in params):
        return (_theta(params.get("full_attention"), "rope_parameters.full_attention", where, full),
                _theta(params.get("sliding_attention"), "rope_parameters.sliding_attention", where, local))
    full = _theta(params if params is not None else {"rope_theta": full}, "rope_parameters", where, full)
    _theta(cfg.get("rope_scaling"), "rope_scaling", where, full)  # transformers 4: scaling of the full layers
    return full, _theta({"rope_theta": local}, "rope_local_base_freq", where, local)


def gemma_options(cfg: dict[str, Any], where: str, names: set[str]) -> dict[str, Any]:
    """The engine's options from a Gemma 3 text config.json, or a one-line error naming the key."""
    kind = cfg.get("model_type")
    if kind == "gemma3":
        raise WeightsError(f"{where} is Gemma 3's multimodal model (model_type 'gemma3'); explain reads the text "
                           "decoder, a Gemma3ForCausalLM folder (model_type 'gemma3_text')")
    if kind not in MODEL_TYPES:
        raise WeightsError(f"{where} has model_type {kind!r}; explain's gemma reads {', '.join(MODEL_TYPES)}")
    ints = {k: _number(cfg, k, where) for k in ("hidden_size", "num_attention_heads", "num_hidden_layers",
                                                "intermediate_size", "vocab_size", "max_position_embeddings",
                                                "head_dim", "sliding_window")}
    h = ints["num_attention_heads"]
    kv = _number(cfg, "num_key_value_heads", where) if cfg.get("num_key_value_heads") is not None else h
    if h % kv:
        raise WeightsError(f"{where}: {h} attention heads cannot share {kv} key/value heads equally")
    for key in ("attn_logit_softcapping", "final_logit_softcapping"):
        if cfg.get(key) is not None:
            raise WeightsError(f"{where} sets {key} {cfg[key]!r} (Gemma 2's soft-capping, tanh(x/c)·c); explain's "
                               "gemma computes Gemma 3, which has none")
    for key, why in (("attention_bias", "biases on q, k, v and o_proj"),
                     ("use_bidirectional_attention", "every token seeing every other")):
        if cfg.get(key):
            raise WeightsError(f"{where} sets {key} ({why}); explain's gemma computes Gemma 3's causal decoder "
                               "without it")
    act = cfg.get("hidden_activation", cfg.get("hidden_act", "gelu_pytorch_tanh"))
    if act not in ACTIVATIONS:
        raise WeightsError(f"{where} sets hidden_activation {act!r}; explain's gemma computes GeGLU with GELU's tanh "
                           f"approximation only ({' or '.join(ACTIVATIONS)})")
    scalar = cfg.get("query_pre_attn_scalar", _DEFAULTS["query_pre_attn_scalar"])
    if isinstance(scalar, float) and scalar.is_integer():
        scalar = int(scalar)
    if not isinstance(scalar, int) or isinstance(scalar, bool) or scalar < 1:
        raise WeightsError(f"{where}: query_pre_attn_scalar must be a positive whole number, got {scalar!r}")
    n = ints["num_hidden_layers"]
    if cfg.get("layer_types") is not None:
        kinds = layer_types(cfg["layer_types"], where)
        if len(kinds.split(",")) != n:
            raise WeightsError(f"{where}: layer_types lists {len(kinds.split(','))} layers, num_hidden_layers is {n}")
    else:
        every = cfg.get("sliding_window_pattern", cfg.get("_sliding_window_pattern", GEMMA_PATTERN))
        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            raise WeightsError(f"{where}: sliding_window_pattern must be a positive whole number, got {every!r}")
        kinds = ",".join(pattern_kinds(n, every))
    eps = cfg.get("rms_norm_eps", 1e-6)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise WeightsError(f"{where}: rms_norm_eps must be a small positive number, got {eps!r}")
    full, local = rope_thetas(cfg, where)
    tied = bool(cfg.get("tie_word_embeddings", True)) or bool(names) and "lm_head.weight" not in names
    return dict(d_model=ints["hidden_size"], n_heads=h, n_kv_heads=kv, d_head=ints["head_dim"], n_layers=n,
                d_ff=ints["intermediate_size"], d_vocab=ints["vocab_size"], n_ctx=ints["max_position_embeddings"],
                rope_theta=full, rope_local_base_freq=local, sliding_window=ints["sliding_window"], layer_types=kinds,
                query_pre_attn_scalar=scalar, ln_eps=float(eps), tie_embeddings=tied)


def expected_shapes(o: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every Hugging Face tensor name of a Gemma3ForCausalLM and the shape the options imply for it."""
    d, f, m, h, kv, V = o["d_model"], o["d_ff"], o["d_head"], o["n_heads"], o["n_kv_heads"], o["d_vocab"]
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    if not o["tie_embeddings"]:
        out["lm_head.weight"] = (V, d)
    for i in range(o["n_layers"]):
        p = f"model.layers.{i}."
        out.update({p + theirs + ".weight": (m,) if ours.startswith("attn.") else (d,)
                    for ours, theirs in NORMS.items()})
        out.update({p + "self_attn.q_proj.weight": (h * m, d), p + "self_attn.k_proj.weight": (kv * m, d),
                    p + "self_attn.v_proj.weight": (kv * m, d), p + "self_attn.o_proj.weight": (d, h * m),
                    p + "mlp.gate_proj.weight": (f, d), p + "mlp.up_proj.weight": (f, d),
                    p + "mlp.down_proj.weight": (d, f)})
    return out


def to_engine(get: Callable[[str], Any], o: dict[str, Any]) -> dict[str, Any]:
    """The engine's parameters from Hugging Face's tensors (``get(name)`` gives one as float64; a norm's weight
    is w itself, the engine adding the 1)."""
    import numpy as np  # lazy: numpy off the shape path (opening a folder reads its config only)

    d, m = o["d_model"], o["d_head"]
    p = {"W_E": get("model.embed_tokens.weight"), "ln_final.w": get("model.norm.weight")}
    if not o["tie_embeddings"]:
        p["unembed.W_U"] = np.ascontiguousarray(get("lm_head.weight").T)
    for i in range(o["n_layers"]):
        hf, ours = f"model.layers.{i}.", f"blocks.{i}."
        p.update({ours + name + ".w": get(hf + theirs + ".weight") for name, theirs in NORMS.items()})
        for s, n in (("q", o["n_heads"]), ("k", o["n_kv_heads"]), ("v", o["n_kv_heads"])):
            w = get(hf + f"self_attn.{s}_proj.weight")  # [n·m, d]
            p[ours + f"attn.W_{s.upper()}"] = np.ascontiguousarray(w.reshape(n, m, d).transpose(0, 2, 1))
        p[ours + "attn.W_O"] = np.ascontiguousarray(get(hf + "self_attn.o_proj.weight").T)
        for name, theirs in (("W_gate", "gate_proj"), ("W_in", "up_proj"), ("W_out", "down_proj")):
            p[ours + f"mlp.{name}"] = np.ascontiguousarray(get(hf + f"mlp.{theirs}.weight").T)
    return p


class GemmaCheckpoint(LlamaCheckpoint):
    """A Gemma3ForCausalLM folder: its config as ``gemma`` options, its tokenizer.json (with <bos> first, as
    Gemma's tokenizer adds it), its weights."""

    model = "gemma"

    def read_options(self, config: dict[str, Any], where: str, names: set[str]) -> dict[str, Any]:
        return gemma_options(config, where, names)

    def shapes(self) -> dict[str, tuple[int, ...]]:
        return expected_shapes(self.options)

    def engine(self, get: Callable[[str], Any]) -> dict[str, Any]:
        return to_engine(get, self.options)

    def _says(self) -> str:
        o = self.options
        return (f"num_hidden_layers {o['n_layers']}, hidden_size {o['d_model']}, num_attention_heads {o['n_heads']}, "
                f"num_key_value_heads {o['n_kv_heads']}, head_dim {o['d_head']}, intermediate_size {o['d_ff']}, "
                f"vocab_size {o['d_vocab']}")

    def bos(self) -> int | None:
        """The id put before every text: config.json's bos_token_id when tokenizer_config.json's add_bos_token
        says so (Gemma's default: it does)."""
        tc = self.path / "tokenizer_config.json"
        doc = read_checkpoint_json(tc, "a tokenizer_config.json") if tc.is_file() else {}
        add = doc.get("add_bos_token", True) if isinstance(doc, dict) else True
        bos = self.config.get("bos_token_id", 2)
        return bos if add is True and isinstance(bos, int) and 0 <= bos < self.options["d_vocab"] else None

    def encode(self, text: str) -> list[int]:
        bos = self.bos()
        return ([] if bos is None else [bos]) + super().encode(text)


__all__ = ["GemmaCheckpoint", "MODEL_TYPES", "expected_shapes", "gemma_options", "to_engine"]
