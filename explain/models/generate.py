"""Generation with the decoder-only GPT: after the prompt's forward pass, one new token at a time.

Token n's steps are recorded in the scope ``gen.n`` (``gen.3.blocks.0.attn.q``), under the names the prompt's
forward uses, and with its parameters. Token 0 is read off the prompt's last position; each later token runs
the forward pass of its one new position on the key/value cache (the prompt's K and V, with a row appended per
token: ``kv_append``), so a long generation records one position per token and earlier positions are never
recomputed (Pope et al. 2022, "Efficiently Scaling Transformer Inference", §2; ``past_key_values`` in
transformers). Then the choice: ÷ temperature, the top-k and top-p filters, softmax, and the draw (greedy
argmax, or inverse-CDF sampling with a seeded uniform number), in the order ``transformers``' ``generate``
applies them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explain.core.config import Config
from explain.core.errors import InputError
from explain.core.inputs import Inputs
from explain.core.names import gen_scope
from explain.core.registry import MODELS
from explain.core.sampling import Sampling
from explain.models.gemma import gemma_step
from explain.models.layers import layer_norm
from explain.models.llama import llama_step
from explain.models.mla import CACHE as MLA_CACHE
from explain.models.zoo import gpt_block
from explain.trace import Generation
from explain.trace.recorder import Recorder, Ref


def gpt_step(rec: Recorder, cfg: Config, token: Ref, pos: int, caches: list[dict]) -> Ref:
    """The forward pass of the one new position ``pos`` on the cache: embed, blocks, final LN, logits."""
    W_E = rec.reuse("W_E")
    x = rec.op("embed", "embed", token, W_E)  # (B, 1, d)
    x = rec.op("add", "blocks.0.resid_pre", x, rec.op("pos_embed", "pos_embed", rec.reuse("W_pos"), n=1, start=pos))
    for i, cache in enumerate(caches):
        with rec.scope(f"blocks.{i}"):
            x = gpt_block(rec, cfg, x, cache)  # (B, 1, d)
    x = layer_norm(rec, cfg, "ln_final", x)
    return rec.op("linear", "logits", x, W_E, transpose_w=True)  # (B, 1, d_vocab)


def check_probabilities(probs: Any) -> None:
    """Refuse probabilities that are not finite before a draw (argmax would quietly give token 0)."""
    import numpy as np  # lazy: numpy loads only when values are computed (test_shapes_imports)

    bad = ~np.isfinite(np.asarray(probs, dtype=float)).all(axis=-1)
    if bad.any():
        where = np.argwhere(bad)[0].tolist()
        raise InputError(f"the probabilities at {where} hold NaN or ∞ (the logits overflowed: weights too "
                         "large, or a temperature too small to divide by); nothing was drawn: use --temperature "
                         "0 for greedy decoding, or a larger temperature")


def next_token(rec: Recorder, logits: Ref, s: Sampling, n: int) -> Ref:
    """Logits (B, T, V) → the next token (B, 1): ÷ temperature, top-k, top-p, softmax, draw."""
    z = logits if logits.shape[-2] == 1 else rec.op("last_position", "next_logits", logits)  # (B, 1, V)
    if not s.greedy:
        z = rec.op("temperature", "temperature", z, t=s.temperature)
        if s.top_k is not None:
            z = rec.op("top_k", "top_k", z, k=s.top_k)
        if s.top_p is not None:
            z = rec.op("top_p", "top_p", z, p=s.top_p)
    probs = rec.op("softmax", "probs", z)  # (B, 1, V)
    if not rec.shape_only:
        check_probabilities(probs.value)  # no NaN ever reaches a draw
    if s.greedy:
        return rec.op("argmax", "next", probs)  # (B, 1)
    u = rec.op("uniform", "u", shape=probs.shape[:-1], axes=probs.axes[:-1], seed=s.seed, n=n)  # (B, 1)
    return rec.op("sample", "next", probs, u)  # (B, 1)


def ended(rec: Recorder, tokens: list[Ref], eos: int | None) -> bool:
    """Whether every sequence has drawn the end-of-text token (a shape-only plan never knows: it plans for all)."""
    if eos is None or rec.shape_only:
        return False
    return all(any(int(t.value[b, 0]) == eos for t in tokens) for b in range(tokens[0].shape[0]))


def decoder(cfg: Config) -> tuple[Callable[..., Ref], dict[str, tuple[str, str]]]:
    """The model's one-position forward on the cache, and what its cache holds: for each entry the attention
    reads (``cache["K"]``), the step under ``blocks.N.attn`` it starts from in the prompt's forward, and the step
    that appends to it in a new token's. GPT caches its keys as projected, Llama after their rotation (as
    transformers does); latent attention caches its latent and its rotary key (:data:`explain.models.mla.CACHE`)."""
    forward = MODELS[cfg.model].function.rsplit(":", 1)[-1]  # the forward function's name
    if forward == "llama" and cfg.attention == "mla":
        return llama_step, MLA_CACHE
    return {"gpt": (gpt_step, {"K": ("k", "k_cache"), "V": ("v", "v_cache")}),
            "llama": (llama_step, {"K": ("rot_k", "k_cache"), "V": ("v", "v_cache")}),
            "gemma": (gemma_step, {"K": ("rot_k", "k_cache"), "V": ("v", "v_cache")})}[forward]


def generate(rec: Recorder, cfg: Config, inp: Inputs, s: Sampling) -> list[Ref]:
    """Append up to ``s.max_new_tokens`` tokens after the prompt's forward (already recorded); the draws. The
    recorder's trace says what was generated (:class:`explain.trace.Generation`)."""
    with rec.scope(gen_scope(0)):
        tokens = [next_token(rec, rec.ref("logits"), s, 0)]
    return extend(rec, cfg, inp.seq_len, tuple(tuple(ids) for ids in inp.ids), s, tokens)


def extend(rec: Recorder, cfg: Config, T: int, prompt: tuple[tuple[int, ...], ...], s: Sampling, tokens: list[Ref],
           before: tuple[Sampling, ...] = ()) -> list[Ref]:
    """Go on after the draws ``tokens`` (new tokens 0, 1, … already recorded, after a prompt of ``T`` positions)
    up to ``s.max_new_tokens``: each next token's one-position forward on the cache the last one left, then its
    draw. ``before``: the settings tokens 0, 1, … were drawn with when they differ from ``s`` (the TUI's live
    sampling changes them from a token on: :mod:`explain.engine.resample`)."""
    L = cfg.n_layers
    capacity = T + s.max_new_tokens - 1  # the last token is drawn, never fed back
    step, held = decoder(cfg)

    def caches(prefix: str, first: bool) -> list[dict]:
        return [{**{key: rec.ref(f"{prefix}blocks.{i}.attn.{names[0 if first else 1]}") for key, names in held.items()},
                 "capacity": capacity, "first": first} for i in range(L)]

    last = len(tokens) - 1  # the newest token drawn: the cache is the one its forward left (the prompt's for 0)
    cache = caches("", True) if last == 0 else caches(gen_scope(last) + ".", False)
    for n in range(len(tokens), s.max_new_tokens):
        if ended(rec, tokens, s.eos):
            break
        with rec.scope(gen_scope(n)):
            logits = step(rec, cfg, tokens[-1], T + n - 1, cache)
            tokens.append(next_token(rec, logits, s, n))
        cache = caches(gen_scope(n) + ".", False)
    rec.generation = Generation(s, prompt, tuple(t.name for t in tokens),
                                stopped_at_eos=len(tokens) < s.max_new_tokens, before=before)
    return tokens
