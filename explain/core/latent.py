"""Multi-head latent attention's configuration (``--attention mla``, DeepSeek-V2/V3): its widths with the derived
ones filled in (:class:`Latent`, read as ``cfg.latent``), the checks that refuse widths that cannot be built (one
line each, naming the option and the fix), and the arithmetic of its cache, read with no numpy by
``explain shapes`` and by the shape checker's ``--cost`` (:func:`latent_cost`).

The model code is :mod:`explain.models.mla`; the options (named after the Hugging Face config keys) are in
:mod:`explain.core.options`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explain.core.errors import ConfigError
from explain.core.moe import Figure
from explain.core.options import OPTION, check_cap, flag


@dataclass(frozen=True)
class Latent:
    """The widths of multi-head latent attention (DeepSeek-V2 §2.1), named as Hugging Face's config keys."""

    q_lora_rank: int  # queries: x → q_lora_rank → RMSNorm → every head's query
    kv_lora_rank: int  # the latent keys and values come from: what the cache holds, with the rotary key
    qk_nope_head_dim: int  # the part of a query/key head with no rotation
    qk_rope_head_dim: int  # the rotated part: the query's own, the key's one shared by every head
    v_head_dim: int  # a head's value

    def cache_per_token(self) -> int:
        """Numbers the cache holds per token per layer: the latent and the rotary key (DeepSeek-V3: 576)."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    def plain_cache_per_token(self, n_heads: int) -> int:
        """What plain multi-head attention with the same heads would cache: every head's whole key and value
        (DeepSeek-V3: 128 × (192 + 128) = 40,960)."""
        return n_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim)


_LATENT_WIDTHS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


def check_latent(cfg: Any) -> None:
    """Refuse latent attention's widths where they cannot be built (or on plain attention), in one line."""
    if cfg.attention not in OPTION["attention"].choices:
        raise ConfigError(f"attention must be one of {', '.join(OPTION['attention'].choices)}, got {cfg.attention!r}")
    given = [n for n in _LATENT_WIDTHS if getattr(cfg, n) is not None]
    if cfg.attention != "mla":
        if given:
            raise ConfigError(f"{flag(given[0])} is a width of latent attention; add {flag('attention')} mla or drop "
                              "it")
        return
    if cfg.n_kv_heads is not None:
        raise ConfigError(f"{flag('n_kv_heads')}: latent attention has no key/value heads (every head reads one "
                          f"shared latent); drop {flag('n_kv_heads')}, or use {flag('attention')} mha")
    if cfg.attention_kernel != "plain":
        raise ConfigError(f"{flag('attention_kernel')} {cfg.attention_kernel} tiles one Q·Kᵀ; latent attention's "
                          f"scores are two products (no-rope and rotary parts); drop {flag('attention_kernel')}")
    if cfg.qkv_bias:
        raise ConfigError(f"{flag('qkv_bias')}: latent attention's projections have no biases here; drop it")
    lat = cfg.latent
    if lat.qk_rope_head_dim < 1:
        raise ConfigError(f"{flag('qk_nope_head_dim')} {lat.qk_nope_head_dim} leaves no rotary part in the head "
                          f"({flag('d_head')} {cfg.d_head}); give a no-rope width below {cfg.d_head} or drop "
                          f"{flag('d_head')}")
    if lat.qk_rope_head_dim % 2:
        even = lat.qk_rope_head_dim - 1 if lat.qk_rope_head_dim > 2 else 2
        raise ConfigError(f"{flag('qk_rope_head_dim')} {lat.qk_rope_head_dim}: a rotation turns pairs of dimensions, "
                          f"so the rotary width must be even; use {even}")
    if lat.qk_nope_head_dim < 1:
        base = lat.qk_nope_head_dim + lat.qk_rope_head_dim
        raise ConfigError(f"{flag('qk_rope_head_dim')} {lat.qk_rope_head_dim} is not narrower than the head "
                          f"(d_head {base}): no dimension would be left without rotation; give a rotary width below "
                          f"{base}, or {flag('qk_nope_head_dim')} for the rest of the head")
    if cfg.d_head is not None and lat.qk_nope_head_dim + lat.qk_rope_head_dim != cfg.d_head:
        raise ConfigError(f"{flag('d_head')} {cfg.d_head} is not {flag('qk_nope_head_dim')} {lat.qk_nope_head_dim} + "
                          f"{flag('qk_rope_head_dim')} {lat.qk_rope_head_dim} (a query/key head is the two parts); "
                          "drop one of them")
    for name in _LATENT_WIDTHS:
        check_cap(name, getattr(lat, name))


def latent_cost(cfg: Any, seq: int | None = None, bytes_per_number: int = 2) -> list[Figure]:
    """Latent attention's cache for the shape checker's ``--cost``: numbers per token per layer (the latent and the
    rotary key) against plain multi-head attention with the same heads (every head's key and value), then over
    the layers, in bytes (``bytes_per_number``: 2 for bfloat16) and, with ``seq``, at that many tokens. Empty for
    plain attention. DeepSeek-V3: 576 against 40,960 numbers per token per layer, 71× fewer."""
    if cfg.attention != "mla":
        return []
    lat, h, L, b = cfg.latent, cfg.n_heads, cfg.n_layers, bytes_per_number
    r, dr, dn, dv = lat.kv_lora_rank, lat.qk_rope_head_dim, lat.qk_nope_head_dim, lat.v_head_dim
    mla, mha = lat.cache_per_token(), lat.plain_cache_per_token(h)
    rows = [Figure("latent cache, numbers per token per layer", mla, f"kv_lora_rank + qk_rope_head_dim = {r} + {dr}"),
            Figure("plain attention's cache, numbers per token per layer", mha,
                   f"heads·(qk_nope + qk_rope + v) = {h}·({dn} + {dr} + {dv})"),
            Figure("latent cache bytes per token, all layers", L * mla * b, f"{L} layers × {mla:,} × {b} bytes"),
            Figure("plain attention's cache bytes per token, all layers", L * mha * b, f"{L} layers × {mha:,} × {b} bytes")]
    if seq is not None:
        rows.append(Figure(f"latent cache bytes at {seq:,} tokens", seq * L * mla * b,
                           f"{seq:,} tokens × {L * mla * b:,} bytes"))
    return rows
