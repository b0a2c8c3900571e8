"""New token ``n`` of a generation drawn again with other settings (temperature, top-k, top-p, seed), and the
tokens after it regenerated: :func:`resample` returns a new trace (the TUI's live sampling screen makes it in a
cancellable worker, :mod:`explain.background`).

Nothing before the draw is run again: the new trace keeps the old one's steps up to token ``n``'s logits (the
prompt's forward, the earlier tokens' forwards and draws, their key/value caches) as they are, then records token
``n``'s choice with the new settings and goes on with :func:`explain.models.generate.extend`, the generation's own
loop, one position at a time on the cache. The earlier tokens keep the settings they were drawn with
(:attr:`explain.trace.Generation.before` says which)."""

from __future__ import annotations

from dataclasses import replace

from explain.core.errors import UsageError
from explain.core.names import gen_number, gen_scope, gen_step
from explain.core.sampling import Sampling
from explain.models.generate import extend, next_token
from explain.models.notation import notation
from explain.trace import Trace
from explain.trace.recorder import Recorder


def token_of(trace: Trace, index: int) -> int | None:
    """The new token whose draw step ``index`` belongs to: its ``gen.N`` number; 0 on the prompt's steps of a
    generation (the prompt's logits give token 0); None when the trace is no generation."""
    if trace.generation is None:
        return None
    n = gen_number(trace[index].name)
    return 0 if n is None else min(n, len(trace.generation.steps) - 1)


def logits_of(trace: Trace, n: int) -> str:
    """The step holding the logits new token ``n`` is drawn from, (B, 1, V): the prompt's last position for
    token 0 (the prompt's own logits when the prompt is one token: nothing to pick), token n's own forward
    after."""
    if n > 0:
        return gen_step(n, "logits")
    last = gen_step(0, "next_logits")
    return last if last in trace else "logits"


def resample(trace: Trace, n: int, sampling: Sampling) -> Trace:
    """``trace`` with new token ``n`` drawn with ``sampling`` (its max_new_tokens and end-of-text token are the
    run's) and every token after it regenerated; the steps before token ``n``'s choice are the old trace's own."""
    gen = trace.generation
    if gen is None or not 0 <= n < len(gen.steps):
        raise UsageError(f"no new token {n} in this run to draw again")
    sampling = replace(sampling, max_new_tokens=gen.sampling.max_new_tokens, eos=gen.sampling.eos)
    start = trace[logits_of(trace, n)]
    # keep every step before token n's draw: up to its logits, and (a one-token prompt's token 0 reads the
    # prompt's logits) the prompt's own steps after them
    first = next(s.index for s in trace.steps if s.name.startswith(gen_scope(n) + "."))
    kept = Trace(trace.config, trace.steps[:max(start.index + 1, first)], trace.params, trace.specs, trace.labels,
                 False, trace.batch_labels)
    rec = Recorder.resume(kept)
    rec.notation = notation(trace.config)  # the symbols and notes a run gives the steps it records
    rec.batch_labels = dict(trace.batch_labels)
    tokens = [rec.ref(name) for name in gen.steps[:n]]
    with rec.scope(gen_scope(n)):
        tokens.append(next_token(rec, rec.ref(start.name), sampling, n))
    before = tuple(gen.sampling_of(i) for i in range(n))
    T = trace["logits"].shape[-2]
    extend(rec, trace.config, T, gen.prompt, sampling, tokens,
           before=() if all(s == sampling for s in before) else before)
    return rec.trace().keeps_run_of(trace)
