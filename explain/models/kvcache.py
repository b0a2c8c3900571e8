"""The key/value cache of a generation (Pope et al. 2022, "Efficiently Scaling Transformer Inference", §2;
``past_key_values`` in transformers), typed: what one layer's attention keeps of the positions before the new one.

Plain attention keeps each earlier position's key and value, as attention reads them: GPT as projected, a rotary
model after the rotation (as transformers does). A sliding layer keeps only its window's last positions, so its cache
never grows past the window. Latent attention (:mod:`explain.models.mla`) keeps neither: only each position's latent
and its rotary key, both shared by every head, from which the keys and values are rebuilt.

Each field is a step of the trace: the prompt's own (``blocks.N.attn.rot_k``) going into new token 1, the step the
last new token appended (``gen.3.blocks.N.attn.k_cache``) after that.
"""

from __future__ import annotations

from dataclasses import dataclass

from explain.core.config import Config
from explain.core.names import gen_step
from explain.trace.recorder import Recorder, Ref


@dataclass(frozen=True)
class KVCache:
    """One layer's cache going into a new position's forward. ``capacity``: the positions it holds by the
    generation's end (the buffer each append writes into); ``first``: its entries are the prompt's steps (the first
    append copies them into that buffer); ``window``: a sliding layer's, which keeps only its last ``window``."""

    capacity: int
    first: bool
    keys: Ref | None = None  # (B, kv, S, m), plain attention
    values: Ref | None = None  # (B, kv, S, m)
    latent: Ref | None = None  # (B, 1, S, kv_lora_rank), latent attention
    rot_k: Ref | None = None  # (B, 1, S, qk_rope_head_dim), latent attention: the one rotary key every head reads
    window: int | None = None

    def append(self, rec: Recorder, name: str, held: Ref | None, new: Ref, pos: int | None = None) -> Ref:
        """Step ``name``: ``new`` (the new position's row, at ``pos``) appended to ``held`` (a window keeps its
        last rows, so it needs ``pos``)."""
        assert held is not None, f"{name}: this layer's cache holds no such entry"
        attrs: dict = dict(capacity=self.capacity, first=self.first)
        if self.window is not None:
            assert pos is not None, f"{name}: a sliding layer's cache needs the new position"
            attrs.update(keep=self.window, pos=pos)
        return rec.op("kv_append", name, held, new, **attrs)

    def extend(self, rec: Recorder, k: Ref, v: Ref, pos: int | None = None) -> tuple[Ref, Ref]:
        """The keys and values with the new position's appended: (B, kv, S+1, m) each (at most the window)."""
        return self.append(rec, "k_cache", self.keys, k, pos), self.append(rec, "v_cache", self.values, v, pos)

    def extend_latent(self, rec: Recorder, c: Ref, rot_k: Ref, pos: int | None = None) -> tuple[Ref, Ref]:
        """The latents and rotary keys with the new position's appended: (B, 1, S+1, r) and (B, 1, S+1, dr)."""
        return (self.append(rec, "latent_cache", self.latent, c, pos),
                self.append(rec, "rot_k_cache", self.rot_k, rot_k, pos))


def _held(cfg: Config) -> dict[str, tuple[str, str]]:
    """What a layer caches: each field's step under ``blocks.N.attn`` in the prompt's forward, and the step that
    appends to it in a new token's."""
    if cfg.attention == "mla":
        return {"latent": ("ln_kv", "latent_cache"), "rot_k": ("rot_k", "rot_k_cache")}
    key = "rot_k" if cfg.spec.can("rope") else "k"  # a rotary model caches its keys rotated
    return {"keys": (key, "k_cache"), "values": ("v", "v_cache")}


def layer_caches(rec: Recorder, cfg: Config, capacity: int, after: int | None) -> list[KVCache]:
    """Every layer's cache after the prompt's forward (``after`` None) or after new token ``after``'s."""
    held = _held(cfg)

    def entry(i: int, steps: tuple[str, str]) -> Ref:
        name = f"blocks.{i}.attn.{steps[0 if after is None else 1]}"
        return rec.ref(name if after is None else gen_step(after, name))

    return [KVCache(capacity, after is None, window=cfg.window(i), **{field: entry(i, steps) for field, steps in
                                                                      held.items()}) for i in range(cfg.n_layers)]


__all__ = ["KVCache", "layer_caches"]
