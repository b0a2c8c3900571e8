"""Memory: what a run may use, and the refusal, before anything is allocated, of a run that would not fit.

:func:`check_memory` takes a planned (shape-only) trace or :func:`explain.engine.api.estimate`'s closed-form
(parameter count, trace bytes); :func:`generation_bytes` splits a generation's trace into the prompt, each
new token and the key/value cache, for the refusal's advice and the benchmarks.
"""

from __future__ import annotations

import os
from typing import Any

from explain import ops
from explain.core.errors import ResourceError
from explain.core.names import gen_number
from explain.trace import BYTES_PER_VALUE, Trace


def available_bytes() -> int:
    """Memory we may use: EXPLAIN_MAX_BYTES if set, else MemAvailable from /proc/meminfo, else 8 GiB."""
    env = os.environ.get("EXPLAIN_MAX_BYTES")
    if env and env.isdigit():
        return int(env)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 * 2**30


def _gib(n: int) -> str:
    """A byte count for a message: KiB, MiB, GiB or TiB, and powers of ten past a thousand TiB (never 50 digits)."""
    if n >= 1000 * 2**40:
        return f"{n / 2**40:.1e} TiB"
    if n >= 2**40:
        return f"{n / 2**40:.1f} TiB"
    if n < 2**20:  # a small model's run (a budget set by EXPLAIN_MAX_BYTES): "38 KiB", not "0 MiB"
        return f"{n / 2**10:.0f} KiB"
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


MEMORY_SHARE = 0.8  # of the available memory a run may plan to use (the rest: Python, the TUI, the OS)


def _has_gradients(planned: Trace | tuple[int, int]) -> bool:
    return isinstance(planned, Trace) and planned.backward is not None


def check_memory(planned: Trace | tuple[int, int], gradients: bool = False, new_tokens: int | None = None,
                 checkpoint: bool = False, advice: str | None = None) -> None:
    """Refuse, before allocating anything, a run whose weights and trace would not fit in memory. Takes a
    planned trace or :func:`estimate`'s (parameter count, trace bytes); ``gradients`` says the trace holds the
    backward pass, ``new_tokens`` that it generates that many tokens, ``checkpoint`` that a checkpoint sets
    every size (the message then suggests only what such a run can change); ``advice`` is what a command with
    other options (explain train) suggests instead."""
    n_params, trace = (planned.n_params, planned.nbytes) if isinstance(planned, Trace) else planned
    weights = n_params * BYTES_PER_VALUE
    need = weights + trace
    avail = available_bytes()
    budget = int(MEMORY_SHARE * avail)
    if need > budget:
        gen = ""
        if isinstance(planned, Trace) and planned.generation is not None:  # each new token keeps one position
            per = generation_bytes(planned)
            gen = (f"; a generation keeps only each new token's own steps, about {_gib(per['per_token'])} a token, "
                   f"and the key/value cache ({_gib(per['cache'])}) holds the rest: use fewer --max-new-tokens")
        elif new_tokens is not None:
            gen = f"; the trace holds {new_tokens:,} new tokens: use fewer --max-new-tokens"
        grads = " with its gradients" if gradients or _has_gradients(planned) else ""
        raise ResourceError(f"this run needs about {_gib(need)} (weights {_gib(weights)}, trace{grads} "
                            f"{_gib(trace)}) but explain plans to use at most {MEMORY_SHARE:.0%} of the "
                            f"{_gib(avail)} available ({_gib(budget)}); "
                            f"{advice or _advice(checkpoint, bool(grads), weights, budget)}{gen}")


def _advice(checkpoint: bool, gradients: bool, weights: int, budget: int) -> str:
    """What the user can change to make a run fit. A checkpoint's file sets every size, so --layers, --vocab and
    --d-model are no help there (they are refused beside it): only the input, the backward pass and the
    generation are the user's to shrink."""
    if not checkpoint:
        return "use a shorter input, fewer --layers, or a smaller --vocab/--d-model"
    if weights > budget:
        return "the checkpoint's weights alone do not fit: open a smaller checkpoint, or free memory"
    return "its sizes are the checkpoint's: give fewer tokens (a shorter --text or --tokens, fewer texts)" + \
        (", or drop --backward" if gradients else "")


def memory_need(planned: Trace) -> tuple[int, int]:
    """Bytes of a run's weights and of its trace (forward steps, and gradient steps when it has them)."""
    return planned.n_params * BYTES_PER_VALUE, planned.nbytes


def generation_bytes(trace: Trace) -> dict[str, int]:
    """Memory of a generation's trace: the prompt's forward, each new token's own steps (the last full one's
    size) and the key/value cache buffers (allocated once for every token), in bytes."""
    def held(s: Any) -> int:
        return BYTES_PER_VALUE * ops.get(s.op).stored_values(s.shape, [trace.shape_of(n) for n in s.inputs],
                                                             **s.attrs)

    assert trace.generation is not None, "not a generation's trace"
    n = len(trace.generation.steps)
    out = {"prompt": 0, "per_token": 0, "cache": 0}
    for s in trace:
        if s.op == "kv_append":
            out["cache"] += held(s)
        elif gen_number(s.name) is None:
            out["prompt"] += held(s)
        elif gen_number(s.name) == n - 1 and n > 1:
            out["per_token"] += held(s)
    return out
