"""Llama-family checkpoints in a Hugging Face folder (``model_type`` llama, mistral or qwen2), opened as the
engine's ``llama``: ``config.json``, ``model.safetensors`` or shards listed in ``model.safetensors.index.json``,
and ``tokenizer.json``.

Reading the config and the safetensors headers (JSON, no tensor data), and checking that they and the index agree
(:mod:`explain.checkpoints.folder_check`), is all that opening does, so ``explain shapes`` stays light; the weights are read on first use. The tensors map onto the
engine's parameters like this (a Hugging Face linear weight is stored [out, in]; the engine computes x·W)::

    model.embed_tokens.weight [V, d]                 W_E
    model.layers.N.input_layernorm.weight            blocks.N.ln1.w
    model.layers.N.self_attn.q_proj.weight [h·m, d]  blocks.N.attn.W_Q (h, d, m): rows j·m … j·m + m − 1 are head j
    … k_proj, v_proj [kv·m, d]                       blocks.N.attn.W_K, W_V (kv, d, m); Qwen2's biases b_Q/b_K/b_V
    model.layers.N.self_attn.o_proj.weight [d, h·m]  blocks.N.attn.W_O (h·m, d)
    model.layers.N.post_attention_layernorm.weight   blocks.N.ln2.w
    model.layers.N.mlp.gate_proj / up_proj / down_proj  blocks.N.mlp.W_gate / W_in / W_out (transposed)
    model.norm.weight                                ln_final.w
    lm_head.weight [V, d]                            unembed.W_U (d, V); absent: the output is tied to W_E

Mistral's ``sliding_window`` (and Qwen2's with ``use_sliding_window``, in the layers ``max_window_layers`` and on,
or as ``layer_types`` says) becomes the engine's ``--window``: a sliding layer's mask step and its window cache.
What the engine does not compute is refused in one line naming it: another architecture, a rope scaling type,
biases on o_proj or the MLP, an activation other than SiLU.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from explain.checkpoints.folder_check import check_caps, check_index, check_tensors, header_table
from explain.checkpoints.gpt2 import (
    CONFIG,
    INSTALL,
    WEIGHTS,
    DependencyError,
    GPT2Checkpoint,
    read_bf16,
    read_checkpoint_json,
)
from explain.checkpoints.keys import capped
from explain.checkpoints.latent import LATENT_TYPES, latent_options, latent_shapes, latent_to_engine
from explain.checkpoints.moe import MOE_TYPES, layout, moe_options, moe_shapes, moe_to_engine
from explain.core.errors import InputError, WeightsError
from explain.core.window import KINDS

# mixtral, qwen2_moe: a mixture of experts (checkpoints.moe); deepseek_v3: latent attention too (checkpoints.latent)
MODEL_TYPES = ("llama", "mistral", "qwen2", *MOE_TYPES, *LATENT_TYPES)
INDEX = "model.safetensors.index.json"
_DEFAULT_THETA = {"llama": 10000.0, "mistral": 10000.0, "qwen2": 10000.0, "mixtral": 1000000.0,
                  "qwen2_moe": 10000.0, "deepseek_v3": 10000.0}  # the configs' own defaults


def rope_theta(cfg: dict[str, Any], where: str, scaling_ok: bool = False) -> float:
    """θ from transformers 4's top-level ``rope_theta`` or 5's ``rope_parameters``; a scaling type refused (unless
    ``scaling_ok``: a config.json alone, whose shapes it does not change, as DeepSeek-V3's YaRN)."""
    params = cfg.get("rope_parameters") or {}
    scaling = cfg.get("rope_scaling") or {}
    for key, block in (("rope_parameters", params), ("rope_scaling", scaling)):
        if not isinstance(block, dict):
            raise WeightsError(f"{where}: {key} must be a table such as {{\"rope_type\": \"default\"}}, got "
                               f"{str(block)[:40]!r}")
        kind = block.get("rope_type", block.get("type", "default"))
        if kind != "default" and not scaling_ok:
            raise WeightsError(f"{where} uses rope scaling {kind!r}; explain computes the default rotary "
                               "embedding only (remove rope_scaling if the run stays within the original context)")
    theta = params.get("rope_theta", cfg.get("rope_theta", _DEFAULT_THETA.get(cfg.get("model_type"), 10000.0)))
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 1 < theta < 1e12:
        raise WeightsError(f"{where}: rope_theta must be a number above 1 and below 1e12, got {theta!r}")
    return float(theta)


def llama_options(cfg: dict[str, Any], where: str, names: set[str]) -> dict[str, Any]:
    """The engine's options from a Llama/Mistral/Qwen2 config.json (``names``: the tensor names the weights
    hold, to see whether lm_head is there), or a one-line error naming the key that cannot be used."""
    kind = cfg.get("model_type")
    if kind not in MODEL_TYPES:
        raise WeightsError(f"{where} has model_type {kind!r}; explain reads gpt2, {', '.join(MODEL_TYPES)}")
    ints: dict[str, int] = {}
    for key in ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size", "vocab_size",
                "max_position_embeddings", "num_key_value_heads", "head_dim"):
        v = cfg.get(key)
        if v is None and key == "num_key_value_heads":
            v = ints["num_attention_heads"]
        if v is None and key == "head_dim":
            v = ints["hidden_size"] // ints["num_attention_heads"]
        if v is None and key == "max_position_embeddings":
            v = 2048
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise WeightsError(f"{where}: {key} must be a positive whole number, got {v!r}")
        ints[key] = capped(where, key, v)
    h, kv = ints["num_attention_heads"], ints["num_key_value_heads"]
    if h % kv:
        raise WeightsError(f"{where}: {h} attention heads cannot share {kv} key/value heads equally")
    act = cfg.get("hidden_act", "silu")
    if act != "silu":
        raise WeightsError(f"{where} sets hidden_act {act!r}; explain's llama computes SwiGLU with SiLU only")
    if cfg.get("mlp_bias"):
        raise WeightsError(f"{where} sets mlp_bias; explain's llama has no MLP biases")
    if kind == "llama" and cfg.get("attention_bias"):
        raise WeightsError(f"{where} sets attention_bias (biases on q, k, v and o_proj); explain's llama takes "
                           "biases on q, k and v only (Qwen2's)")
    n_ctx = ints["max_position_embeddings"]
    eps = cfg.get("rms_norm_eps", 1e-6)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise WeightsError(f"{where}: rms_norm_eps must be a small positive number, got {eps!r}")
    # a folder without lm_head is tied; a config alone (explain shapes) says so itself
    tied = bool(cfg.get("tie_word_embeddings", False)) or bool(names) and "lm_head.weight" not in names
    qkv_bias = kind == "qwen2" or kind == "qwen2_moe" and bool(cfg.get("qkv_bias", True))
    o = dict(d_model=ints["hidden_size"], n_heads=h, n_kv_heads=kv, d_head=ints["head_dim"],
             n_layers=ints["num_hidden_layers"], d_ff=ints["intermediate_size"], d_vocab=ints["vocab_size"],
             n_ctx=n_ctx, rope_theta=rope_theta(cfg, where, scaling_ok=not names), ln_eps=float(eps),
             qkv_bias=qkv_bias, tie_embeddings=tied, **moe_options(cfg, where, ints["num_hidden_layers"]),
             **window_options(cfg, where, ints["num_hidden_layers"]))
    latent = latent_options(cfg, where)
    if latent:  # latent attention: no key/value heads, a head of no-rope + rotary parts
        del o["n_kv_heads"], o["d_head"]
    return {**o, **latent}


def window_options(cfg: dict[str, Any], where: str, n_layers: int) -> dict[str, Any]:
    """Mistral's and Mixtral's ``sliding_window`` (every layer), Qwen2's with ``use_sliding_window`` (the layers
    from ``max_window_layers`` on, or its ``layer_types``) as the engine's window options; none without one."""
    kind = cfg.get("model_type")
    window = cfg.get("sliding_window") if kind in ("mistral", "mixtral") or cfg.get("use_sliding_window") else None
    if window is None:
        return {}
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise WeightsError(f"{where}: sliding_window must be a positive whole number or null, got {window!r}")
    types = cfg.get("layer_types")
    if types is None and kind in ("qwen2", "qwen2_moe"):
        first = cfg.get("max_window_layers", 28)
        if not isinstance(first, int) or isinstance(first, bool) or first < 0:
            raise WeightsError(f"{where}: max_window_layers must be a whole number, got {first!r}")
        types = ["sliding" if i >= first else "full" for i in range(n_layers)]
    return dict(sliding_window=window, **({} if types is None else {"layer_types": layer_types(types, where)}))


def layer_types(types: Any, where: str) -> str:
    """A config's ``layer_types`` list as the engine's ``sliding,full,…``, or a one-line error."""
    if not isinstance(types, list) or not all(isinstance(t, str) and t in KINDS for t in types):
        raise WeightsError(f"{where}: layer_types must list 'sliding_attention' or 'full_attention' per layer, got "
                           f"{str(types)[:60]}")
    return ",".join(KINDS[t] for t in types)


def _moe_layer(o: dict[str, Any], i: int) -> bool:
    return bool(o.get("n_experts")) and i >= o.get("first_k_dense_replace", 0)


def _attention_shapes(o: dict[str, Any], p: str) -> dict[str, tuple[int, ...]]:
    """Layer ``p``'s attention tensors: q, k, v (Qwen2's biases), o; or latent attention's (checkpoints.latent)."""
    if o.get("attention") == "mla":
        return latent_shapes(o, p)
    d, m, h, kv = o["d_model"], o["d_head"], o["n_heads"], o["n_kv_heads"]
    a = p + "self_attn."
    out = {a + "q_proj.weight": (h * m, d), a + "k_proj.weight": (kv * m, d), a + "v_proj.weight": (kv * m, d)}
    if o["qkv_bias"]:
        out.update({a + "q_proj.bias": (h * m,), a + "k_proj.bias": (kv * m,), a + "v_proj.bias": (kv * m,)})
    return {**out, a + "o_proj.weight": (d, h * m)}


def expected_shapes(o: dict[str, Any], moe: tuple[str, tuple[str, str]] | None = None) -> dict[str, tuple[int, ...]]:
    """Every Hugging Face tensor name and the shape the options imply for it; ``moe`` = (model_type, (layout,
    module name)) for a mixture's layers (:mod:`explain.checkpoints.moe`)."""
    d, f, V = o["d_model"], o["d_ff"], o["d_vocab"]
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    if not o["tie_embeddings"]:
        out["lm_head.weight"] = (V, d)
    for i in range(o["n_layers"]):
        p = f"model.layers.{i}."
        out.update({p + "input_layernorm.weight": (d,), **_attention_shapes(o, p),
                    p + "post_attention_layernorm.weight": (d,)})
        if moe is not None and _moe_layer(o, i):
            out.update(moe_shapes(o, moe[0], moe[1], p))
            continue
        out.update({p + "mlp.gate_proj.weight": (f, d), p + "mlp.up_proj.weight": (f, d),
                    p + "mlp.down_proj.weight": (d, f)})
    return out


def to_engine(get: Callable[[str], Any], o: dict[str, Any], moe: tuple[str, tuple[str, str]] | None = None
              ) -> dict[str, Any]:
    """The engine's parameters from Hugging Face's tensors (``get(name)`` gives one as float64)."""
    import numpy as np  # lazy: numpy off the shape path (opening a folder reads its config only)

    d, m = o["d_model"], o.get("d_head")
    p = {"W_E": get("model.embed_tokens.weight"), "ln_final.w": get("model.norm.weight")}
    if not o["tie_embeddings"]:
        p["unembed.W_U"] = np.ascontiguousarray(get("lm_head.weight").T)
    for i in range(o["n_layers"]):
        hf, ours = f"model.layers.{i}.", f"blocks.{i}."
        p[ours + "ln1.w"] = get(hf + "input_layernorm.weight")
        p[ours + "ln2.w"] = get(hf + "post_attention_layernorm.weight")
        if o.get("attention") == "mla":
            p.update(latent_to_engine(get, o, hf, ours))
        else:
            for s, n in (("q", o["n_heads"]), ("k", o["n_kv_heads"]), ("v", o["n_kv_heads"])):
                w = get(hf + f"self_attn.{s}_proj.weight")  # [n·m, d]
                p[ours + f"attn.W_{s.upper()}"] = np.ascontiguousarray(w.reshape(n, m, d).transpose(0, 2, 1))
                if o["qkv_bias"]:
                    p[ours + f"attn.b_{s.upper()}"] = get(hf + f"self_attn.{s}_proj.bias").reshape(n, m)
            p[ours + "attn.W_O"] = np.ascontiguousarray(get(hf + "self_attn.o_proj.weight").T)
        if moe is not None and _moe_layer(o, i):
            p.update(moe_to_engine(get, o, moe[0], moe[1], hf, ours))
            continue
        for ours_name, theirs in (("W_gate", "gate_proj"), ("W_in", "up_proj"), ("W_out", "down_proj")):
            p[ours + f"mlp.{ours_name}"] = np.ascontiguousarray(get(hf + f"mlp.{theirs}.weight").T)
    return p


class LlamaCheckpoint(GPT2Checkpoint):
    """A Llama/Mistral/Qwen2 folder: its config as ``llama`` options, its tokenizer.json, its weights."""

    model = "llama"

    def __init__(self, path: Path, config: dict[str, Any]) -> None:
        self.path, self.config = path, config
        index = path / INDEX
        if (path / WEIGHTS).is_file():
            tables = {WEIGHTS: header_table(path / WEIGHTS)}
            wmap = dict.fromkeys(tables[WEIGHTS], WEIGHTS)
        elif index.is_file():
            doc = read_checkpoint_json(index, "a safetensors index (weight_map: tensor name → shard file)")
            wmap = doc.get("weight_map") if isinstance(doc, dict) else None
            if not isinstance(wmap, dict) or not all(isinstance(v, str) and "/" not in v for v in wmap.values()):
                raise WeightsError(f"'{index}' has no weight_map of tensor names to shard files in the folder")
            missing = sorted({v for v in wmap.values() if not (path / v).is_file()})
            if missing:
                raise WeightsError(f"'{index}' lists the shard '{missing[0]}', which is not in '{path}'")
            tables = {v: header_table(path / v) for v in sorted(set(wmap.values()))}
            check_index(index, wmap, tables)
        else:  # a config.json alone: explain shapes counts and plans it; a run is refused (params)
            tables, wmap = {}, {}
        self.files = {k: path / v for k, v in wmap.items()}
        self.options = self.read_options(config, f"'{path / CONFIG}'", set(self.files))
        kind = config.get("model_type")
        self.moe = (kind, layout(set(self.files))) if self.options.get("n_experts") else None
        check_caps(self.options)
        table = {k: t[k] for t in tables.values() for k in t}  # every tensor the folder holds: the files agree
        if tables:
            check_tensors(table, self.shapes(), self._says(), short=lambda k: k,
                          stored=lambda k: k, where=lambda k: f"'{self.files[k]}'",
                          missing_where=f"checkpoint '{path}'")
        tok = path / "tokenizer.json"
        self.tokenizer_path = tok if tok.is_file() else None
        self.weights_path = path / WEIGHTS
        self._labels = None
        self._tokenizer = None
        self._params = None

    # -- what a family's folder reads: its config as options, its tensors' names and shapes, the engine's names
    def read_options(self, config: dict[str, Any], where: str, names: set[str]) -> dict[str, Any]:
        return llama_options(config, where, names)

    def shapes(self) -> dict[str, tuple[int, ...]]:
        return expected_shapes(self.options, self.moe)

    def engine(self, get: Callable[[str], Any]) -> dict[str, Any]:
        return to_engine(get, self.options, self.moe)

    def _says(self) -> str:
        """config.json's sizes, as an error names them."""
        o = self.options
        heads = (f"kv_lora_rank {o['kv_lora_rank']}, q_lora_rank {o['q_lora_rank']}" if o.get("attention") == "mla"
                 else f"num_key_value_heads {o['n_kv_heads']}, head_dim {o['d_head']}")
        return (f"num_hidden_layers {o['n_layers']}, hidden_size {o['d_model']}, num_attention_heads {o['n_heads']}, "
                f"{heads}, intermediate_size {o['d_ff']}, "
                f"vocab_size {o['d_vocab']}" + (f", {o['n_experts']} experts" if o.get("n_experts") else ""))

    def pad_id(self) -> int:
        for key in ("pad_token_id", "eos_token_id", "bos_token_id"):
            v = self.config.get(key)
            v = v[0] if isinstance(v, list) and v else v
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < self.options["d_vocab"]:
                return v
        return 0

    def params(self) -> dict[str, Any]:
        if not self.files:
            raise InputError(f"checkpoint folder '{self.path}' has neither {WEIGHTS} nor {INDEX}: 'explain shapes' "
                             "reads its config.json alone, a run needs the weights")
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
        want = self.shapes()  # every name, shape and type was checked on opening
        handles: dict[Path, Any] = {}
        try:
            for path in sorted(set(self.files[k] for k in want)):
                try:
                    handles[path] = safe_open(str(path), framework="numpy")
                except Exception as exc:  # the parser's own errors (bad header, truncated file)
                    msg = (str(exc).splitlines() or [type(exc).__name__])[0]
                    raise WeightsError(f"cannot read '{path}': {msg}; it must be a whole safetensors file") from None

            def get(k: str) -> Any:
                f = handles[self.files[k]]
                arr = read_bf16(self.files[k], k) if f.get_slice(k).get_dtype() == "BF16" else f.get_tensor(k)
                return arr.astype(np.float64)

            return self.engine(get)
        finally:
            for h in handles.values():
                h.__exit__(None, None, None)


__all__ = ["LlamaCheckpoint", "llama_options", "expected_shapes", "to_engine", "rope_theta", "MODEL_TYPES"]
