"""Running a tutorial: its model with its options and weights, every stop's step resolved, every expectation
checked. Also the step a stop shows (:func:`stop_step`) and the narration keyed by step name for the notebook
exporter (:func:`narration_by_step`)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from explain.checkpoints.catalogue import CATALOGUE
from explain.core.errors import ExplainError
from explain.core.options import OPTIONS
from explain.core.sampling import make_sampling
from explain.core.shape_rules import fmt_shape
from explain.engine.api import plan, run_request
from explain.engine.ask import make_request
from explain.trace import Step, Trace
from explain.tutorial.checks import Check, check_stop
from explain.tutorial.errors import Source, TutorialError
from explain.tutorial.interp import record as record_interp
from explain.tutorial.schema import Stop, Tutorial

# CLI flags in engine messages, as the [options] keys a tutorial writes
_FLAGS = {o.flag: o.name for o in OPTIONS} | {o.off_flag: f"{o.name} = false" for o in OPTIONS if o.off_flag}


@dataclass
class Report:
    """A checked run: the trace, and every expectation that held."""

    tutorial: Tutorial
    trace: Trace
    checks: list[Check] = field(default_factory=list)


def _src(tutorial: Tutorial) -> Source:
    return tutorial.source or Source(str(tutorial.path or tutorial.name))


def _as_options(message: str) -> str:
    """An engine message in tutorial terms: ``use --context 7`` → ``use n_ctx = 7``."""
    def repl(m: re.Match) -> str:
        key = _FLAGS.get(m.group(1))
        if key is None:
            return m.group(0)
        return f"{key} = {m.group(3)}" if m.group(3) else key
    return re.sub(r"(--[a-z][a-z-]*)(\s+(\d+))?", repl, message)


def to_fetch(tutorial: Tutorial) -> str | None:
    """What opening ``tutorial`` will fetch first, in one line (its ``checkpoint`` names a model of the catalogue
    that is not on this machine yet), or None."""
    entry = CATALOGUE.get(str(tutorial.options.get("checkpoint")))
    if entry is None:
        return None
    from explain.checkpoints.cache import present  # lazy: hashing and the atomic writer only for a catalogue model

    if present(entry):
        return None
    return (f"this tutorial runs {entry.title} ('{entry.name}' of explain models), not on this machine yet: "
            f"fetching it first, once ({entry.download / 1e6:,.0f} MB); after that it opens with no network")


def run_options(tutorial: Tutorial) -> dict[str, Any]:
    """The keyword arguments of :func:`explain.run` for this tutorial (weights not included)."""
    opts = dict(tutorial.options)
    if tutorial.embeddings is not None:
        opts["embeddings"] = tutorial.embeddings
    if tutorial.generate:  # never stops early at an end-of-text token: the stops name every new token's steps

        opts["sampling"] = make_sampling(**tutorial.generate, seed=opts.get("seed"))
    return opts


def _full_weights(tutorial: Tutorial, opts: dict[str, Any]) -> dict[str, Any]:
    """The tutorial's weights checked by name and shape against the model, the rest initialised from the seed
    exactly as ``explain run`` would."""
    import numpy as np  # lazy: numpy off the shape path

    from explain.engine.weights import init_params  # lazy: numpy off the shape path

    src = _src(tutorial)
    planned = plan(tutorial.model, **opts)
    for name, arr in tutorial.weights.items():
        spec = planned.specs.get(name)
        f = f'weights."{name}"'
        if spec is None:
            near = difflib.get_close_matches(name, list(planned.specs), n=1, cutoff=0.5)
            hint = f"did you mean '{near[0]}'? " if near else ""
            raise src.error(f"the {tutorial.model} model has no parameter '{name}'",
                            f"{hint}list the names with 'explain params {tutorial.model} -o f.npz'", field=f)
        if tuple(arr.shape) != tuple(spec.shape):
            raise src.error(f"has shape {fmt_shape(arr.shape)} but the model needs {fmt_shape(spec.shape)} "
                            f"({', '.join(spec.axes)})", f"give a {' × '.join(map(str, spec.shape))} array, or "
                            "change [options] (d_model, n_heads, d_head, …)", field=f)
        if not np.all(np.isfinite(arr)):
            raise src.error("holds inf or nan", "give finite numbers (inf is for expectations only)", field=f)
    params = init_params(planned.specs, planned.config.seed)
    params.update(tutorial.weights)
    return params


def _run(tutorial: Tutorial) -> Trace:
    entry = CATALOGUE.get(str(tutorial.options.get("checkpoint")))
    if entry is not None:  # fetched first, so that its own errors (the index, the disk) are not the options'
        from explain.checkpoints.fetch import ensure  # lazy: pip's child and zipfile only for a catalogue model

        ensure(entry)
    try:
        opts = run_options(tutorial)
        if tutorial.weights:  # given by [weights], the rest random from the seed: random_weights says the rest
            opts.pop("random_weights", None)
            req = make_request(tutorial.model, weights=_full_weights(tutorial, opts), **opts)
        else:
            req = make_request(tutorial.model, **opts)
        return record_interp(req, run_request(req), tutorial.interp)
    except TutorialError:
        raise
    except ExplainError as exc:
        raise _src(tutorial).error(f"the {tutorial.model} model cannot run with these options: "
                                   f"{_as_options(str(exc))}", field="options") from None


def resolve_step(trace: Trace, name: str) -> Step:
    """The step called ``name``, or the first step of the group ``name`` (``blocks.0.attn`` →
    ``blocks.0.attn.q``); a TutorialError that suggests the nearest names otherwise."""
    if name in trace:
        return trace[name]
    prefix = name.rstrip(".") + "."
    for step in trace:
        if step.name.startswith(prefix):
            return step
    groups = {".".join(s.name.split(".")[:k]) for s in trace for k in range(1, s.name.count(".") + 1)}
    near = difflib.get_close_matches(name, trace.names() + sorted(groups), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(repr(n) for n in near)}?" if near else \
        f"list the steps with 'explain shapes {trace.config.model}'"
    raise TutorialError(f"no step or group named '{name}' in this {trace.config.model} run; {hint}")


def stop_step(trace: Trace, stop: Stop) -> Step:
    """The step a stop shows: the named step, or the first step of the named group."""
    return resolve_step(trace, stop.step)


def check_tutorial(tutorial: Tutorial) -> Report:
    """Run the tutorial and check every stop: its step exists, its cell is inside the output, and every
    expectation holds. Raises a TutorialError (file, line, stop, field, fix) at the first that does not."""
    src = _src(tutorial)
    trace = _run(tutorial)
    checks: list[Check] = []
    for i, stop in enumerate(tutorial.stops):
        try:
            step = stop_step(trace, stop)
        except TutorialError as exc:
            what, _, fix = str(exc).partition("; ")
            raise src.error(what, fix, field="step", stop=i, step=stop.step) from None

        def fail(what: str, fix: str, *, field: str | None = None, _i: int = i, _s: str = stop.step) -> Exception:
            return src.error(what, fix, field=field, stop=_i, step=_s)

        checks.extend(check_stop(trace, step, stop, fail))
    trace.tutorial = tutorial.name
    trace.checks = checks
    return Report(tutorial, trace, checks)


def run_tutorial(tutorial: Tutorial) -> Trace:
    """Run the tutorial's model and check every expectation; the trace, with ``trace.tutorial`` (the
    name) and ``trace.checks`` (what was checked)."""
    return check_tutorial(tutorial).trace


def _step_names(tutorial: Tutorial, trace: Trace | None) -> list[str]:
    """The step each stop shows, resolved in ``trace`` or in a shape-only plan of the tutorial's run."""
    if trace is None:
        try:
            trace = plan(tutorial.model, **run_options(tutorial))
        except ExplainError as exc:
            raise _src(tutorial).error(f"the {tutorial.model} model cannot run with these options: "
                                       f"{_as_options(str(exc))}", field="options") from None
    return [resolve_step(trace, s.step).name for s in tutorial.stops]


def narration_by_step(tutorial: Tutorial, trace: Trace | None = None, questions: bool = True) -> dict[str, str]:
    """Markdown for each step a stop shows, in stop order: a ``### title`` heading, the narration, and the
    question with its answer folded in a ``<details>`` block. Several stops on one step are joined. Group
    stops ("blocks.0.attn") are keyed by the step they show, resolved in ``trace`` (or a shape-only plan)."""
    out: dict[str, str] = {}
    for stop, name in zip(tutorial.stops, _step_names(tutorial, trace)):
        parts = [f"### {stop.title}", stop.narration.strip()]
        if questions and stop.question:
            parts.append(f"**Question.** {stop.question.strip()}")
            if stop.answer:
                parts.append(f"<details><summary>Answer</summary>\n\n{stop.answer.strip()}\n\n</details>")
        text = "\n\n".join(parts)
        out[name] = f"{out[name]}\n\n{text}" if name in out else text
    return out
