"""Local and global attention's configuration: which layers see only a sliding window of keys (the layer kinds),
the rotary base of each kind, the attention scale, and the checks that refuse a window that cannot be built (one
line each, naming the option and the fix). No numpy: ``explain shapes`` reads it.

Names follow the Hugging Face config keys: ``sliding_window`` (``--window``), ``layer_types`` (each layer
``sliding_attention`` or ``full_attention``; ``--layer-types sliding,full,…``), ``rope_local_base_freq`` (the
sliding layers' θ, transformers 4's Gemma 3 key) and ``query_pre_attn_scalar``. A query at position i sees key j
of a sliding layer when 0 ≤ i − j < window (transformers' ``sliding_window_overlay``: ``kv_idx > q_idx −
sliding_window``), so a window of W keeps W keys, the query's own included.
"""

from __future__ import annotations

from typing import Any

from explain.core.errors import ConfigError
from explain.core.options import OPTION, flag

SLIDING, FULL = "sliding", "full"
KINDS = {"sliding": SLIDING, "full": FULL, "sliding_attention": SLIDING, "full_attention": FULL}
GEMMA_PATTERN = 6  # Gemma 3 (and llama.cpp's gemma3): five sliding layers, then a full one


def parse_layer_types(value: Any) -> tuple[str, ...]:
    """``"sliding,full"`` (or a list, in the Hugging Face spelling too: ``sliding_attention``) as a tuple of
    ``sliding`` / ``full``; a ConfigError naming an unknown word."""
    words = value.split(",") if isinstance(value, str) else list(value)
    out = []
    for w in words:
        kind = KINDS.get(w.strip().lower()) if isinstance(w, str) else None
        if kind is None:
            raise ConfigError(f"{flag('layer_types')}: {w!r} is not a kind of attention layer; give 'sliding' or "
                              "'full' for each layer, comma-separated (e.g. sliding,sliding,full)")
        out.append(kind)
    return tuple(out)


def pattern_kinds(n_layers: int, every: int) -> tuple[str, ...]:
    """Hugging Face's (and llama.cpp's) pattern: layer i is full when (i + 1) is a multiple of ``every``."""
    return tuple(SLIDING if (i + 1) % every else FULL for i in range(n_layers))


def layer_kinds(cfg: Any) -> tuple[str, ...]:
    """Each layer's kind of attention: ``--layer-types`` as given; else every layer full without a window; else,
    for a model whose registry sets ``sliding_window_pattern`` (Gemma: 6), a full layer every 6th, and the last
    layer full when that leaves none (a small model then shows both kinds); else every layer sliding (Mistral's
    ``sliding_window``)."""
    if cfg.layer_types is not None:
        return parse_layer_types(cfg.layer_types)
    if cfg.sliding_window is None:
        return (FULL,) * cfg.n_layers
    if cfg.sliding_window_pattern:
        kinds = pattern_kinds(cfg.n_layers, cfg.sliding_window_pattern)
        return kinds if FULL in kinds else kinds[:-1] + (FULL,)
    return (SLIDING,) * cfg.n_layers


def check_window(cfg: Any) -> None:
    """Refuse layer kinds, a window or a scale that cannot be built, in one line naming the option and the fix."""
    if cfg.layer_types is not None:
        kinds = parse_layer_types(cfg.layer_types)
        if len(kinds) != cfg.n_layers:
            raise ConfigError(f"{flag('layer_types')} names {len(kinds)} layer{'s' if len(kinds) != 1 else ''} but "
                              f"there are {cfg.n_layers}; give one kind per layer (or {flag('n_layers')} {len(kinds)})")
        if SLIDING in kinds and cfg.sliding_window is None:
            raise ConfigError(f"{flag('layer_types')} names sliding layers but there is no window; add "
                              f"{flag('sliding_window')} N (the keys a sliding layer sees)")
    local = cfg.rope_local_base_freq
    if local is not None and (isinstance(local, bool) or not isinstance(local, (int, float)) or not 1 < local < 1e12):
        raise ConfigError(f"rope_local_base_freq must be a number above 1 (10000 for Gemma 3), got {local!r}")
    if cfg.sliding_window is not None and getattr(cfg, "attention", "mha") == "mla":
        raise ConfigError(f"{flag('sliding_window')} masks keys by distance, which latent attention here does not "
                          f"take; drop {flag('sliding_window')} or {OPTION['attention'].flag} mla")


def _short(theta: float) -> str:
    """θ as a narrow column says it: 10k, 1M, 500k, 10,000.5 as it is."""
    for size, unit in ((1e6, "M"), (1e3, "k")):
        if theta >= size and (theta / size) % 1 == 0:
            return f"{theta / size:g}{unit}"
    return f"{theta:g}"


def kind_text(cfg: Any, group: str) -> str | None:
    """What the step tree says beside a block of a run with a window, in its narrow column (28 characters, a
    block's name included): ``sliding θ10k`` or ``full θ1M``; None for another group, or a run without a window.
    The window's width is in the window mask's own step."""
    if cfg.sliding_window is None or not group.startswith("blocks.") or not group[7:].isdigit():
        return None
    layer = int(group[7:])
    if layer >= cfg.n_layers:
        return None
    return f"{cfg.layer_kind(layer)} θ{_short(cfg.theta(layer))}"


def describe(cfg: Any) -> str:
    """The layer kinds as a line says them: ``sliding ×5, full, sliding ×5, full`` (runs collapsed)."""
    runs: list[list[Any]] = []
    for kind in layer_kinds(cfg):
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in runs)


__all__ = ["FULL", "GEMMA_PATTERN", "KINDS", "SLIDING", "check_window", "describe", "kind_text", "layer_kinds",
           "parse_layer_types", "pattern_kinds"]
