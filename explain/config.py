"""Model configuration: one dataclass, per-model defaults, and the checks that refuse a config early.

Nothing here imports numpy, so the shape CLI can build and validate configs at click's speed.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, replace
from typing import Any

from explain.errors import ConfigError, UsageError

# The model zoo, in the order a course meets them. Each name is a CLI argument.
MODELS: dict[str, str] = {
    "simple": "self-attention with no trainable weights: softmax(X·Xᵀ)·X",
    "attention": "single-head scaled dot-product self-attention",
    "causal": "single-head attention with the causal mask",
    "multihead": "multi-head self-attention with an output projection",
    "synthesizer": "dense synthesizer attention (CS224N a5): logits from X alone",
    "encoder": "a stack of original-transformer encoder blocks (post-LN)",
    "transformer": "the full encoder-decoder of Attention Is All You Need",
    "gpt": "a decoder-only GPT: pre-LN blocks, GELU MLP, next-token loss",
}

# Readable defaults per model: small enough to print, big enough to be interesting.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "simple": dict(d_model=4, n_heads=1, n_layers=1),
    "attention": dict(d_model=4, n_heads=1, n_layers=1),
    "causal": dict(d_model=4, n_heads=1, n_layers=1),
    "multihead": dict(d_model=8, n_heads=2, n_layers=1),
    "synthesizer": dict(d_model=8, n_heads=2, n_layers=1),
    "encoder": dict(d_model=8, n_heads=2, n_layers=2),
    "transformer": dict(d_model=8, n_heads=2, n_layers=2),
    "gpt": dict(d_model=8, n_heads=2, n_layers=2),
}

NORMALIZATIONS = ("softmax", "sum")


@dataclass(frozen=True)
class Config:
    """Every dimension of a model. ``None`` means "derive it": d_head = d_model / n_heads, d_ff = 4·d_model,
    d_vocab = the tokenizer's vocabulary size."""

    model: str = "gpt"
    d_model: int = 8
    n_heads: int = 2
    d_head: int | None = None
    d_ff: int | None = None
    n_layers: int = 2
    d_vocab: int | None = None
    n_ctx: int = 32
    seed: int = 0
    normalize: str = "softmax"  # `simple` only: softmax, or divide by the row sum
    ln_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        """d_head, derived from d_model / n_heads when not given."""
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads

    @property
    def ff_dim(self) -> int:
        """d_ff, 4·d_model when not given (as in the original transformer and GPT-2)."""
        return self.d_ff if self.d_ff is not None else 4 * self.d_model

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["d_head"], d["d_ff"] = self.head_dim, self.ff_dim
        return d


def check_model_name(model: str) -> str:
    """The model's name, or a UsageError listing the models and the nearest one."""
    if model in MODELS:
        return model
    near = difflib.get_close_matches(model, MODELS, n=1)
    hint = f"did you mean '{near[0]}'? " if near else ""
    raise UsageError(f"unknown model '{model}'; {hint}choose one of: {', '.join(MODELS)}")


def _divisor_hint(d_model: int, n_heads: int) -> str:
    heads = [h for h in range(1, min(d_model, 64) + 1) if d_model % h == 0]
    widths = [d for d in range(max(n_heads, 1), 8 * max(n_heads, 1) + 1, max(n_heads, 1))][:4]
    return (f"use --heads one of {', '.join(map(str, heads[:8]))} for d_model {d_model}, "
            f"or --d-model a multiple of {n_heads} (e.g. {', '.join(map(str, widths))}), or give --d-head")


def make_config(model: str, **options: Any) -> Config:
    """A validated Config for ``model`` with the per-model defaults, overridden by the given options
    (options that are None are left at their defaults)."""
    model = check_model_name(model)
    values: dict[str, Any] = dict(_DEFAULTS[model])
    values.update({k: v for k, v in options.items() if v is not None})
    known = set(Config.__dataclass_fields__) - {"model"}
    unknown = set(values) - known
    if unknown:
        raise UsageError(f"unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    cfg = Config(model=model, **values)
    validate(cfg)
    return cfg


def validate(cfg: Config) -> None:
    """Refuse a config that cannot be built, naming the value and a fix."""
    for name in ("d_model", "n_heads", "n_layers", "n_ctx"):
        v = getattr(cfg, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"{name} must be a positive whole number, got {v!r}")
    for name in ("d_head", "d_ff", "d_vocab"):
        v = getattr(cfg, name)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ConfigError(f"{name} must be a positive whole number, got {v!r}")
    if cfg.normalize not in NORMALIZATIONS:
        raise ConfigError(f"normalize must be one of {', '.join(NORMALIZATIONS)}, got {cfg.normalize!r}")
    if cfg.normalize != "softmax" and cfg.model != "simple":
        raise ConfigError("--normalize sum applies to the 'simple' model only; drop it or use 'explain run simple'")
    if cfg.model in ("attention", "causal", "simple") and cfg.n_heads != 1:
        raise ConfigError(f"the '{cfg.model}' model has one head; drop --heads or use 'multihead'")
    if cfg.d_head is None and cfg.d_model % cfg.n_heads:
        raise ConfigError(f"d_model {cfg.d_model} is not divisible by {cfg.n_heads} heads; "
                          + _divisor_hint(cfg.d_model, cfg.n_heads))
    if not (cfg.seed >= 0 and cfg.seed < 2**63):
        raise ConfigError(f"seed must be between 0 and 2**63-1, got {cfg.seed}")


def with_vocab(cfg: Config, needed: int) -> Config:
    """The config with d_vocab set: the tokenizer's size when not given, or an error when too small."""
    if cfg.d_vocab is None:
        return replace(cfg, d_vocab=needed)
    if cfg.d_vocab < needed:
        raise ConfigError(f"--vocab {cfg.d_vocab} cannot hold the {needed} tokens this input needs; "
                          f"use --vocab {needed} or more")
    return cfg
