"""Model configuration: one dataclass and the checks that refuse a config early.

The fields' defaults are written where the fields are declared (the option definitions in
:mod:`explain.core.options` state the same values for the command line's help, and a test holds the two equal);
the ranges come from the options, the per-model defaults from the model registry (:mod:`explain.core.registry`). Nothing here imports numpy, so the shape CLI can
build and validate configs at click's speed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from explain.core.errors import ConfigError, UsageError
from explain.core.latent import Latent, check_latent
from explain.core.moe import check_moe
from explain.core.options import OPTION, check_cap, flag
from explain.core.registry import DEFAULT_MODEL, MODELS, Model, check_model_name, entry
from explain.core.takes import not_for_model
from explain.core.window import SLIDING, check_window, layer_kinds


@dataclass(frozen=True)
class Config:
    """Every dimension of a model. ``None`` means "derive it": d_head = d_model / n_heads, d_ff = 4·d_model,
    d_vocab = the tokenizer's vocabulary size."""

    model: str = DEFAULT_MODEL
    d_model: int = 8
    n_heads: int = 2
    d_head: int | None = None
    d_ff: int | None = None
    n_kv_heads: int | None = None  # llama: key/value heads (grouped-query attention); None: n_heads
    rope_theta: float = 10000.0  # llama: the rotary embedding's base
    rope_layout: str | None = None  # half | interleaved; None: half (mla: interleaved)
    attention: str = "mha"  # llama: "mha", or "mla" (latent attention, explain.models.mla)
    q_lora_rank: int | None = None  # mla: the widths, named as Hugging Face's config keys
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    n_layers: int = 2
    d_vocab: int | None = None
    n_ctx: int = 32
    seed: int = 0
    normalize: str = "softmax"
    causal: bool = False  # attention, multihead: the causal mask (the book's MultiHeadAttention)
    qkv_bias: bool = True  # biases on Q, K, V (the book's qkv_bias)
    d_out: int | None = None  # multihead: W_O's output width (the book's d_out); None: d_model
    tie_embeddings: bool = True  # transformer: one W_E, three uses (the paper's §3.4)
    attention_kernel: str = "plain"  # plain, or tiled: the online softmax (FlashAttention)
    attention_tile: int = 2  # the tiled kernel's keys per tile
    # llama: a mixture of experts in the MLP (explain.models.moe; checked by explain.core.moe)
    n_experts: int | None = None  # routed experts; None: a dense MLP
    experts_per_token: int = 2
    n_shared_experts: int = 0
    shared_d_ff: int | None = None  # None: n_shared_experts × the expert width
    shared_expert_gate: bool = False
    moe_d_ff: int | None = None  # None: d_ff
    norm_topk_prob: bool = True
    router: str = "softmax"
    n_group: int = 1
    topk_group: int = 1
    routed_scaling_factor: float = 1.0
    first_k_dense_replace: int = 0
    # local and global attention (explain.core.window)
    sliding_window: int | None = None  # None: no sliding layer
    layer_types: str | None = None  # "sliding,full,…"; None: derived (explain.core.window)
    rope_local_base_freq: float | None = None  # the sliding layers' θ; None: rope_theta
    query_pre_attn_scalar: int | None = None  # scores / √N; None: d_head
    sliding_window_pattern: int = 0  # not an option: a full layer every Nth by default (the registry's gemma: 6)
    assumed: str = ""  # not an option: what a checkpoint did not store ("layer_types,…"), said in the notes
    ln_eps: float = 1e-5  # set by a checkpoint's config.json, not an option

    @property
    def head_dim(self) -> int:
        """d_head, derived from d_model / n_heads when not given (latent attention: a query/key head, its no-rope
        part + its rotary part)."""
        if self.d_head is None and self.attention == "mla":
            lat = self.latent
            return lat.qk_nope_head_dim + lat.qk_rope_head_dim
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads

    @property
    def latent(self) -> Latent:
        """Latent attention's widths, the derived ones filled in (:class:`Latent`): the rotary part 2·⌊d_head / 6⌋
        (at least 2) and the rest of the head without rotation, the value as wide as the head, both ranks
        d_model / 2."""
        base = self.d_head if self.d_head is not None else self.d_model // self.n_heads
        nope, rope = self.qk_nope_head_dim, self.qk_rope_head_dim
        if rope is None:  # the rest of a given head, else a third of it
            rope = base - nope if self.d_head is not None and nope is not None else max(2, 2 * (base // 6))
        if nope is None:
            nope = base - rope
        half = max(1, self.d_model // 2)
        return Latent(self.q_lora_rank or half, self.kv_lora_rank or half, nope, rope, self.v_head_dim or base)

    @property
    def kv_heads(self) -> int:
        """Key/value heads: n_kv_heads, or one per query head when not given."""
        return self.n_kv_heads if self.n_kv_heads is not None else self.n_heads

    @property
    def out_dim(self) -> int:
        """Width of the attention output: d_out for a stand-alone `multihead`, else d_model (the residual stream)."""
        return self.d_out if self.d_out is not None else self.d_model

    @property
    def ff_dim(self) -> int:
        """d_ff, 4·d_model when not given (as in the original transformer and GPT-2)."""
        return self.d_ff if self.d_ff is not None else 4 * self.d_model

    def layer_kind(self, layer: int) -> str:
        """``sliding`` or ``full``: the attention of block ``layer`` (explain.core.window.layer_kinds)."""
        return layer_kinds(self)[layer]

    def rope(self, layer: int, start: int) -> dict[str, Any]:
        """The rotary step's attributes in block ``layer``: its θ, the first row's position and, when asked for
        (--rope-layout), the pairs' layout."""
        out: dict[str, Any] = dict(theta=self.theta(layer), start=start)
        return out if self.rope_layout is None else dict(out, layout=self.rope_layout)

    @property
    def local_theta(self) -> float:
        """The sliding layers' rotary base: rope_local_base_freq, or rope_theta when not given."""
        return float(self.rope_local_base_freq if self.rope_local_base_freq is not None else self.rope_theta)

    def theta(self, layer: int) -> float:
        """The rotary base of block ``layer``: the local θ in a sliding layer, rope_theta in a full one."""
        return self.local_theta if self.layer_kind(layer) == SLIDING else float(self.rope_theta)

    def window(self, layer: int) -> int | None:
        """The keys a query of block ``layer`` sees: the window in a sliding layer, None (all) in a full one."""
        return self.sliding_window if self.layer_kind(layer) == SLIDING else None

    @property
    def attn_scalar(self) -> int:
        """N of the attention's scale 1/√N: query_pre_attn_scalar, or d_head when not given."""
        return self.query_pre_attn_scalar if self.query_pre_attn_scalar is not None else self.head_dim

    def moe_layer(self, layer: int) -> bool:
        """Block ``layer`` has a mixture of experts in place of its dense MLP."""
        return self.n_experts is not None and layer >= self.first_k_dense_replace

    @property
    def expert_dim(self) -> int:
        """A routed expert's width: moe_d_ff, or d_ff when not given (Mixtral's experts are intermediate_size)."""
        return self.moe_d_ff if self.moe_d_ff is not None else self.ff_dim

    @property
    def shared_dim(self) -> int:
        """The shared expert's width: shared_d_ff, or n_shared_experts × the expert width (DeepSeek's)."""
        return self.shared_d_ff if self.shared_d_ff is not None else self.n_shared_experts * self.expert_dim

    @property
    def spec(self) -> Model:
        """The model's registry entry (its capabilities, forward, loss): ``model`` is a name validated when the
        config was made, so this is the one place a config's name becomes its entry."""
        return entry(self.model)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["d_head"], d["d_ff"], d["d_out"] = self.head_dim, self.ff_dim, self.out_dim
        return d


def _divisor_hint(d_model: int, n_heads: int) -> str:
    heads = [h for h in range(1, min(d_model, 64) + 1) if d_model % h == 0]
    widths = [d for d in range(max(n_heads, 1), 8 * max(n_heads, 1) + 1, max(n_heads, 1))][:4]
    return (f"use --heads one of {', '.join(map(str, heads[:8]))} for d_model {d_model}, "
            f"or --d-model a multiple of {n_heads} (e.g. {', '.join(map(str, widths))}), or give --d-head")


def make_config(model: str, **options: Any) -> Config:
    """A validated Config for ``model`` with the per-model defaults, overridden by the given options
    (options that are None are left at their defaults)."""
    return config_for(check_model_name(model), **options)


def config_for(entry: Model, **options: Any) -> Config:
    """:func:`make_config` for a registry entry whose name is already checked (a run's request checks it once)."""
    model = entry.name
    values: dict[str, Any] = dict(entry.defaults)
    values.update({k: v for k, v in options.items() if v is not None})
    if values.get("attention") == "mla" and options.get("n_kv_heads") is None:
        values.pop("n_kv_heads", None)  # the model's default grouping: latent attention has no key/value heads
    known = set(Config.__dataclass_fields__) - {"model"}
    unknown = set(values) - known
    if unknown:
        raise UsageError(f"unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    cfg = Config(model=model, **values)
    validate(cfg)
    return cfg


def validate(cfg: Config) -> None:
    """Refuse a config that cannot be built, naming the value and a fix."""
    model = cfg.spec
    sizes = [o for o in OPTION.values() if o.group == "config" and o.type == "int" and o.name != "seed"]
    for o in sorted(sizes, key=lambda o: o.default is None):  # the always-set sizes first
        v = getattr(cfg, o.name)
        if (v is not None or o.default is not None) and (not isinstance(v, int) or isinstance(v, bool) or v < o.min):
            raise ConfigError(f"{o.name} must be a positive whole number, got {v!r}")
    for o in OPTION.values():  # sane maxima (explain.core.limits): a 10⁸-layer request is refused before any planning
        v = getattr(cfg, o.name, None)
        if o.max is not None and isinstance(v, int):
            check_cap(o.name, v)
    normalize = OPTION["normalize"]
    if cfg.normalize not in normalize.choices:
        raise ConfigError(f"normalize must be one of {', '.join(normalize.choices)}, got {cfg.normalize!r}")
    layout = OPTION["rope_layout"]
    if cfg.rope_layout is not None and cfg.rope_layout not in layout.choices:
        raise ConfigError(f"rope_layout must be one of {', '.join(layout.choices)}, got {cfg.rope_layout!r}")
    kernel = OPTION["attention_kernel"]
    if cfg.attention_kernel not in kernel.choices:
        raise ConfigError(f"attention_kernel must be one of {', '.join(kernel.choices)}, got {cfg.attention_kernel!r}")
    if cfg.attention_kernel == "tiled" and cfg.attention == "mla":
        raise ConfigError("--attention-kernel tiled takes one Q and one K per head; latent attention (--attention mla) "
                          "makes its scores in two parts (no rotation + the shared rotary key): drop one of them")
    if cfg.attention_tile != OPTION["attention_tile"].default and cfg.attention_kernel != "tiled":
        raise ConfigError(f"--tile {cfg.attention_tile} sets the tiled kernel's tile; add --attention-kernel tiled "
                          "or drop --tile")
    for o in OPTION.values():  # a switch or value that must be on or off, not something else
        if o.type == "bool" and not isinstance(getattr(cfg, o.name), bool):
            raise ConfigError(f"{o.name} must be true or false, got {getattr(cfg, o.name)!r}")
    if cfg.causal and model.masking:  # say why this model takes no --causal
        raise ConfigError(f"{flag('causal')}: '{cfg.model}' {model.masking}; drop {flag('causal')}")
    for o in OPTION.values():  # a config option changed from its default on a model that does not use it
        value = getattr(cfg, o.name, o.default)
        if o.group == "config" and not o.used_by(model) and value != o.default:
            raise ConfigError(not_for_model(o, value))  # at its default: refused by the request (core/takes)
    if model.heads is not None and cfg.n_heads != model.heads:
        several = next(m.name for m in MODELS.values() if m.can("heads") and not m.can("blocks"))
        raise ConfigError(f"the '{cfg.model}' model has one head; drop {flag('n_heads')} or use '{several}'")
    if cfg.n_heads % cfg.kv_heads:
        raise ConfigError(f"{cfg.n_heads} query heads cannot share {cfg.kv_heads} key/value heads equally; use "
                          f"{flag('n_kv_heads')} a divisor of {cfg.n_heads}")
    theta = cfg.rope_theta
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 1 < theta < 1e12:
        raise ConfigError(f"rope_theta must be a number above 1 and below 1e12 (10000 for Llama 2), got {theta!r}")
    if cfg.d_head is None and cfg.d_model % cfg.n_heads:
        raise ConfigError(f"d_model {cfg.d_model} is not divisible by {cfg.n_heads} heads; "
                          + _divisor_hint(cfg.d_model, cfg.n_heads))
    check_moe(cfg)
    check_latent(cfg)
    check_window(cfg)
    seed = OPTION["seed"]
    if not (cfg.seed >= seed.min and cfg.seed <= seed.max):
        raise ConfigError(f"seed must be between 0 and 2**63-1, got {cfg.seed}")


def with_vocab(cfg: Config, needed: int) -> Config:
    """The config with d_vocab set: the tokenizer's size when not given, or an error when too small."""
    if cfg.d_vocab is None:
        return replace(cfg, d_vocab=needed)
    if cfg.d_vocab < needed:
        raise ConfigError(f"--vocab {cfg.d_vocab} cannot hold the {needed} tokens this input needs; "
                          f"use --vocab {needed} or more")
    return cfg
