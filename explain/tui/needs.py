"""What a key of the step screen needs (issue 38): the words a :class:`~explain.tui.keys.Key` declares in its
``needs``, how a run shows that it has each (:func:`facts`), and why a key cannot work without it, said in the
TUI's terms (:func:`why_not`).

The step screen's ``check_action`` asks :func:`facts` of the run it shows, so the Footer and the command palette
offer only the keys that work on this model and this run, and a key pressed where it cannot work says why in one
line. A new key declares what it needs here instead of refusing in its action. The facts are the run's, not the
step's: a footer that changed from step to step would cost a frame per key press (the per-step refusals, such as
``s`` on a 2-D step, stay in the actions).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from explain import ops
from explain.core.errors import UsageError
from explain.core.names import tokenizer_step
from explain.core.registry import MODELS
from explain.interp.stream import check_entry
from explain.trace import Step, Trace


@dataclass(frozen=True)
class Run:
    """What the needs are judged on: the run shown, whether a tutorial is open, the inputs it was run with."""

    trace: Trace
    tutorial: bool
    options: Mapping[str, Any]


@dataclass(frozen=True)
class Need:
    """One word a key may need: what it means, whether a run has it, and why a key cannot work without it."""

    means: str
    holds: Callable[[Run], bool] | None  # None: a fact of the steps, found by _steps in its one pass
    why: Callable[[Run], str]


def is_pattern(step: Step) -> bool:
    """An attention pattern: probabilities over positions (not over the vocabulary)."""
    return ops.get(step.op).probability and len(step.shape) >= 2 and step.axes[-1] != "vocab"


def _steps(trace: Trace) -> frozenset[str]:
    """The step-level facts, in one pass over the steps: a slice axis, an attention pattern, a mixture layer."""
    found = set()
    for s in trace:
        if len(s.shape) > 2:
            found.add("slices")
        if s.op == "keep":  # a mixture layer's router keeps each token's top experts
            found.add("experts")
        if is_pattern(s):
            found.add("patterns")
    return frozenset(found)


def _stream_why(run: Run) -> str:
    try:
        check_entry(run.trace.config.spec)
    except UsageError as exc:
        return str(exc)
    return ""


def _generation_why(run: Run) -> str:
    if run.trace.config.spec.generates:
        return "this run generated nothing: G generates five new tokens after its text first"
    return f"this run generated nothing, and {run.trace.config.model} does not write the next token"


def _given_text(run: Run) -> bool:
    return tokenizer_step("text") in run.trace or all(run.options.get(k) is None for k in ("tokens", "embeddings"))


NEEDS: dict[str, Need] = {
    "tutorial": Need("a tutorial is open (its stops, narration and questions)", lambda r: r.tutorial,
                     lambda r: "this is not a tutorial: Ctrl+P, then 'Tutorials', opens one"),
    "generates": Need("the model writes the next token (registry capability 'generates')",
                      lambda r: r.trace.config.spec.generates,
                      lambda r: "generation needs a model that writes the next token: "
                                + ", ".join(m.name for m in MODELS.values() if m.generates)),
    "generation": Need("the run generated new tokens (G)", lambda r: r.trace.generation is not None,
                       _generation_why),
    "stream": Need("a pre-norm residual stream the lens reads (registry capability 'pre_norm')",
                   lambda r: r.trace.config.spec.can("pre_norm"), _stream_why),
    "patching": Need("the run is a patch or a patching sweep (explain patch)",
                     lambda r: r.trace.sweep is not None or r.trace.patched is not None,
                     lambda r: "patching compares two runs: open one with explain patch MODEL --text CLEAN --corrupt "
                               "TEXT --word W --vs W2 --sweep resid"),
    "experts": Need("the run has a mixture-of-experts layer", None,
                    lambda r: "this run has no mixture of experts (run llama with --experts N)"),
    "slices": Need("some step has more than two axes (heads, a batch)", None,
                   lambda r: "every step of this run is 2-D or smaller: there are no slices to turn"),
    "patterns": Need("the run records an attention pattern", None,
                     lambda r: "this run has no attention pattern to show"),
    "text": Need("the run was given text, so there is a tokenizer to show", _given_text,
                 lambda r: "this run was given token ids or embeddings, not text: there is no tokenizer to show"),
}


def facts(run: Run) -> frozenset[str]:
    """The words of :data:`NEEDS` that ``run`` has."""
    return _steps(run.trace) | {word for word, need in NEEDS.items() if need.holds is not None and need.holds(run)}


def why_not(needs: str, run: Run, have: frozenset[str]) -> str:
    """Why a key that ``needs`` (space-separated words) cannot work on ``run`` (which has ``have``): the first
    missing word's reason; "" when nothing is missing."""
    missing = [w for w in needs.split() if w not in have]
    return NEEDS[missing[0]].why(run) if missing else ""
