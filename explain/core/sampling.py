"""How a generation chooses its tokens: :class:`Sampling` (max new tokens, temperature, top-k, top-p, greedy,
seed) and :func:`make_sampling`, which validates every value with a one-line error and says what a special
value means (temperature 0 is greedy decoding). No numpy here: the plan and ``explain shapes`` use it too."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Any

from explain.core.errors import UsageError
from explain.core.options import GENERATION

DEFAULT_NEW_TOKENS = next(int(o.default) for o in GENERATION if o.name == "max_new_tokens")  # type: ignore[call-overload]


@dataclass(frozen=True)
class Sampling:
    """Validated generation settings. ``greedy`` takes the most probable token each time; otherwise the token
    is drawn from softmax(logits / temperature) after the top-k and top-p filters (None: no filter), with
    uniform numbers from a generator seeded with ``seed``. ``notes`` say what the user's values mean. When every
    sequence has drawn ``eos`` (the end-of-text token), the generation stops, as ``transformers`` does."""

    max_new_tokens: int = DEFAULT_NEW_TOKENS
    temperature: float | tuple[float, ...] = 1.0  # or one per sequence of a batch (Python and tutorials)
    top_k: int | None = None
    top_p: float | None = None
    greedy: bool = False
    seed: int = 0
    notes: tuple[str, ...] = field(default=(), compare=False)
    eos: int | None = None  # the end-of-text token: drawing it ends the generation (None: never stop early)

    def describe(self) -> str:
        """``greedy`` or ``sampled at temperature 0.7, top-k 5, top-p 0.9, seed 0``."""
        if self.greedy:
            return "greedy (the most probable token each time)"
        t = self.temperature
        parts = [f"temperature {', '.join(f'{x:g}' for x in t) if isinstance(t, tuple) else f'{t:g}'}"]
        parts += [f"top-k {self.top_k}"] if self.top_k else []
        parts += [f"top-p {self.top_p:g}"] if self.top_p is not None else []
        return "sampled at " + ", ".join(parts) + f", seed {self.seed}"


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"--{name} must be a number, got {value!r}")
    if math.isnan(value):
        raise UsageError(f"--{name} is NaN; give a number")
    return float(value)


# Below this, 1 / T overflows float64 (T is subnormal): every logit divided by it becomes ±∞ and softmax NaN
SMALLEST_TEMPERATURE = sys.float_info.min


def _divisible(t: float, given: Any) -> float:
    if 0 < t < SMALLEST_TEMPERATURE:
        raise UsageError(f"--temperature {given!r} is too small to divide by in float64 (below "
                         f"{SMALLEST_TEMPERATURE:.1e}, the logits would overflow to ±∞ and the probabilities to NaN); "
                         "use --temperature 0 for greedy decoding, which is what a tiny temperature tends to")
    return t


def _check_filters(top_k: Any, top_p: Any) -> None:
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise UsageError(f"--top-k must be a whole number of at least 1, got {top_k!r}")
    if top_p is not None:
        p = _number("top-p", top_p)
        if not 0 < p <= 1:
            raise UsageError(f"--top-p must be more than 0 and at most 1, got {top_p!r} (0.9 keeps the most "
                             "probable tokens holding 90% of the probability)")


def make_sampling(max_new_tokens: int | None = None, temperature: float | None = None, top_k: int | None = None,
                  top_p: float | None = None, greedy: bool = False, seed: int | None = None) -> Sampling:
    """Validated settings from the user's values (None: not given), or a one-line UsageError."""
    notes: list[str] = []
    n = DEFAULT_NEW_TOKENS if max_new_tokens is None else max_new_tokens
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UsageError(f"--max-new-tokens must be a whole number of at least 1, got {n!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise UsageError(f"--seed must be a whole number from 0 to 2**63-1, got {seed!r}")
    if isinstance(temperature, (list, tuple)):  # one per sequence: each must be a positive number
        ts = tuple(_divisible(_number("temperature", x), x) for x in temperature)
        if not ts or any(not 0 < x < math.inf for x in ts):
            raise UsageError(f"temperatures per sequence must be positive finite numbers, got {list(temperature)!r} "
                             "(for greedy decoding use greedy, not a temperature of 0)")
        if greedy:
            raise UsageError("--greedy takes the most probable token, so --temperature would have no effect; drop "
                             "it or drop --greedy")
        _check_filters(top_k, top_p)
        return Sampling(n, ts, top_k, top_p, False, 0 if seed is None else seed, ())
    t = 1.0 if temperature is None else _divisible(_number("temperature", temperature), temperature)
    if t < 0:
        raise UsageError(f"--temperature must be 0 or more, got {temperature!r} (0 is greedy, 1 leaves the "
                         "logits as they are)")
    if math.isinf(t):
        raise UsageError("--temperature is infinite; give a finite number (large values make every token "
                         "about equally likely)")
    _check_filters(top_k, top_p)
    if greedy:
        given = [f for f, v in (("--temperature", temperature), ("--top-k", top_k), ("--top-p", top_p))
                 if v is not None and not (f == "--temperature" and t == 0)]
        if given:
            raise UsageError(f"--greedy takes the most probable token, so {' and '.join(given)} would have no "
                             f"effect; drop {'them' if len(given) > 1 else 'it'} or drop --greedy")
    elif t == 0:
        if top_k is not None or top_p is not None:
            raise UsageError("temperature 0 means greedy decoding (the most probable token), so --top-k/--top-p "
                             "would have no effect; drop them or give a temperature above 0")
        greedy = True
        notes.append("temperature 0 means greedy decoding: the most probable token each time (no sampling)")
    return Sampling(n, 1.0 if greedy else t, top_k, top_p, greedy, 0 if seed is None else seed, tuple(notes))
