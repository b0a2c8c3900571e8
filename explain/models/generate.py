"""Generation with a decoder-only model (GPT, Llama, Gemma): after the prompt's forward pass, one new token at a time.

Token n's steps are recorded in the scope ``gen.n`` (``gen.3.blocks.0.attn.q``), under the names the prompt's
forward uses, and with its parameters. Token 0 is read off the prompt's last position; each later token runs
the model's decode step (its registry entry's ``step``, beside its forward: the forward of one new position) on
the key/value cache (:class:`~explain.models.kvcache.KVCache`: the prompt's K and V, with a row appended per
token: ``kv_append``), so a long generation records one position per token and earlier positions are never
recomputed (Pope et al. 2022, "Efficiently Scaling Transformer Inference", §2; ``past_key_values`` in
transformers). Then the choice: ÷ temperature, the top-k and top-p filters, softmax, and the draw (greedy
argmax, or inverse-CDF sampling with a seeded uniform number), in the order ``transformers``' ``generate``
applies them.
"""

from __future__ import annotations

from typing import Any

from explain.core.config import Config
from explain.core.errors import InputError
from explain.core.inputs import Inputs
from explain.core.names import gen_scope
from explain.core.registry import step_of
from explain.core.sampling import Sampling
from explain.models.kvcache import layer_caches
from explain.trace import Generation
from explain.trace.recorder import Recorder, Ref


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
    capacity = T + s.max_new_tokens - 1  # the last token is drawn, never fed back
    step = step_of(cfg.spec)  # the model's one-position forward on the cache, beside its forward
    last = len(tokens) - 1  # the newest token drawn: the cache is the one its forward left (the prompt's for 0)
    cache = layer_caches(rec, cfg, capacity, None if last == 0 else last)
    for n in range(len(tokens), s.max_new_tokens):
        if ended(rec, tokens, s.eos):
            break
        with rec.scope(gen_scope(n)):
            logits = step(rec, cfg, tokens[-1], T + n - 1, cache)
            tokens.append(next_token(rec, logits, s, n))
        cache = layer_caches(rec, cfg, capacity, n)
    rec.generation = Generation(s, prompt, tuple(t.name for t in tokens),
                                stopped_at_eos=len(tokens) < s.max_new_tokens, before=before)
    return tokens
