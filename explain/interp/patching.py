"""Activation patching (Meng et al. 2022; Heimersheim & Nanda 2024): run a clean and a corrupted text of the same
length, replace chosen cells of one step of the corrupted run (a residual position, one head's z, an MLP output)
with the clean run's, and recompute only what comes after. The patched run is recorded: the clean cells are a step
``patch.clean.S``, the patched step ``patch.S`` says of every cell where it came from, and every later step reads it.

:func:`patch` records one patched run; :func:`sweep` gives the recovered fraction of the logit difference
(patched − corrupted) / (clean − corrupted) for every layer × position (or head), keeping one number per cell and
recomputing, for each, only the steps after the patch point that the logits need (:func:`rerun` counts them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from explain import ops
from explain.core.errors import InputError, UsageError
from explain.core.shown import Showable
from explain.engine.api import run_request
from explain.engine.ask import Request, make_request
from explain.interp import names
from explain.interp.patch_shown import describe, patched_parts, sweep_parts
from explain.interp.stream import check_entry, stream_of, tokenizer_of, word_id
from explain.ops.kernels import patched
from explain.trace import Step, Trace
from explain.trace.recorder import Recorder, Ref

Where = tuple[tuple[int, int], ...]  # (axis, index) pairs, each fixing one axis of the patched step
# clean and corrupted logit differences closer than this (the odds of W against W2 differ by under 11 %) make every
# recovered fraction a ratio of two small numbers: said beside the fractions
SMALL_GAP = 0.1


def where_of(step: Step, position: int | None = None, head: int | None = None) -> Where:
    """The cells of ``step`` at ``position`` and/or of ``head`` (None: every one), refused if it has no such axis."""
    out = []
    for value, axis, what, many in ((head, "head", "--head", "heads"), (position, "pos", "--position", "positions")):
        if value is None:
            continue
        if axis not in step.axes:
            raise UsageError(f"{what} needs a step with a {axis} axis; {step.name} has axes {', '.join(step.axes)}")
        a = step.axes.index(axis)
        if not -step.shape[a] <= value < step.shape[a]:
            raise UsageError(f"{what} {value} is outside {step.name}'s {step.shape[a]} {many}; give 0–"
                             f"{step.shape[a] - 1}")
        out.append((a, value % step.shape[a]))
    return tuple(out)



def needed_for(trace: Trace, target: str) -> set[str]:
    """The steps ``target`` depends on (itself included): what a sweep must recompute, at most."""
    need, todo = set(), [target]
    while todo:
        name = todo.pop()
        if name in need or name not in trace:
            continue
        need.add(name)
        todo.extend(trace[name].inputs)
    return need


def rerun(corrupt: Trace, step: str, value: Any, stop: str | None = None, executed: list[str] | None = None,
          needed: set[str] | None = None) -> dict[str, Any]:
    """The outputs that change when ``step``'s output becomes ``value``: every later step that reads a changed
    value is computed again (only those in ``needed``, if given, and none after ``stop``); the others keep the
    corrupted run's. ``executed`` collects the names of the steps computed, in order."""
    changed = {step: value}
    for s in corrupt.steps[corrupt[step].index + 1:]:
        if needed is not None and s.name not in needed:
            continue
        if s.op != "input" and any(n in changed for n in s.inputs):
            args = [changed[n] if n in changed else corrupt.value(n) for n in s.inputs]
            changed[s.name] = ops.get(s.op).compute(*args, **s.attrs)
            if executed is not None:
                executed.append(s.name)
        if s.name == stop:
            break
    return changed


@dataclass
class Runs:
    """The clean and corrupted runs, and the words whose logit difference is read at the last position."""

    clean: Trace
    corrupt: Trace
    word: int
    vs: int
    word_text: str = ""
    vs_text: str = ""

    def diff(self, logits: Any) -> float:
        return float(logits[0, -1, self.word] - logits[0, -1, self.vs])

    @property
    def clean_diff(self) -> float:
        return self.diff(self.clean["logits"].output)

    @property
    def corrupt_diff(self) -> float:
        return self.diff(self.corrupt["logits"].output)

    def recovered(self, d: float) -> float:
        return (d - self.corrupt_diff) / (self.clean_diff - self.corrupt_diff)

    def notes(self) -> list[str]:
        """A warning when the two runs barely differ: the fractions divide by that difference."""
        gap = self.clean_diff - self.corrupt_diff
        if abs(gap) >= SMALL_GAP:
            return []
        return [f"the clean and corrupted logit differences are only {abs(gap):.2g} apart, and every recovered "
                "fraction divides by that, so small changes read as large fractions: choose a corruption that "
                "changes which of the two words the model prefers"]

    def words(self) -> list[str]:
        """One label per position: the word, or ``clean/corrupted`` where the two texts differ (``tired/happy``),
        as a batch's differing items are labelled."""
        clean, bad = self.clean.labels.get("pos") or [], self.corrupt.labels.get("pos") or []
        return [a if a == b else f"{a}/{b}" for a, b in zip(clean, bad)]


@dataclass
class Patched(Showable):
    """One patched run, recorded: its trace, the patched step, the cells, the logit difference and notes (a patch
    that changes nothing says so). Prints (and draws in a notebook) as ``explain patch --step --plain`` does."""

    runs: Runs
    trace: Trace
    step: str
    where: Where
    diff: float
    cells_changed: int
    notes: list[str] = field(default_factory=list)

    @property
    def recovered(self) -> float:
        return self.runs.recovered(self.diff)

    display_parts = patched_parts  # what print() and a notebook show: explain patch --step --plain's lines

    def first_cell(self) -> tuple[int, ...]:
        """The first cell the patch changed (else the first it took from the clean run): where a view of the patched
        step starts, so its drill-down shows a patched cell, not a kept one."""
        before, clean = self.runs.corrupt[self.step].output, self.runs.clean[self.step].output
        taken = np.zeros(before.shape, dtype=bool)
        taken[tuple(dict(self.where).get(a, slice(None)) for a in range(before.ndim))] = True
        changed = np.argwhere(taken & (before != clean))
        return tuple(int(i) for i in (changed[0] if len(changed) else np.argwhere(taken)[0]))

    def to_dict(self) -> dict[str, Any]:
        r = self.runs
        return {"step": self.step, "where": [list(w) for w in self.where], "word": r.word_text, "vs": r.vs_text,
                "clean": r.clean_diff, "corrupt": r.corrupt_diff, "patched": self.diff, "recovered": self.recovered,
                "cells_changed": self.cells_changed, "notes": self.notes}


def patch_runs(runs: Runs, step: str, where: Where) -> Patched:
    """Record the corrupted run with the cells ``where`` of ``step`` taken from the clean run."""
    corrupt, clean = runs.corrupt, runs.clean
    s = corrupt.find(step)
    if s.op == "input" or s.output is None or s.output.dtype.kind not in "f":
        raise UsageError(f"{step} is a given input (token ids), not an activation; patch a step such as "
                         "blocks.0.resid_pre, blocks.0.attn.z or blocks.0.mlp_out")
    value = patched(s.output, clean[step].output, where)
    cells = tuple(slice(None) if a not in dict(where) else dict(where)[a] for a in range(s.output.ndim))
    n_changed = int(np.count_nonzero(s.output[cells] != clean[step].output[cells]))
    changed = rerun(corrupt, step, value)
    rec = Recorder(corrupt.config, corrupt.params)
    rec.labels, rec.batch_labels, rec.specs = dict(corrupt.labels), dict(corrupt.batch_labels), dict(corrupt.specs)
    rec.labels["pos"] = runs.words()  # the clean step's rows hold the clean words: say both where they differ
    rec.keep_steps(corrupt.steps[:s.index + 1])
    given = rec.input(names.patch_clean(step), clean[step].output, s.axes)
    pref = rec.op("patch", names.patched(step), Ref(step, s.syms.out, s.output, s.axes, s.shape), given,
                  where=where, source=step, cells=describe(s, where), sym="~" + s.syms.out)
    rename, after = {step: pref.name}, len(rec.steps)
    rec.keep_steps(rec.steps + [replace(later, index=after + i, output=changed.get(later.name, later.output),
                                        inputs=tuple(rename.get(n, n) for n in later.inputs))
                                for i, later in enumerate(corrupt.steps[s.index + 1:])])
    logits = rec.ref("logits")  # the fraction as a step of its own, read from the three runs' logits
    given = [rec.input(n("logits"), t["logits"].output, t["logits"].axes) for n, t in
             ((names.patch_clean, clean), (names.patch_corrupt, corrupt))]
    rec.op("recovered", names.RECOVERED, logits, *given, item=0, pos=logits.shape[-2] - 1, word=runs.word,
           vs=runs.vs, sym="R")
    trace = rec.trace().keeps_run_of(corrupt)
    diff = runs.diff(trace["logits"].output)
    notes = runs.notes()
    if n_changed == 0:
        notes.append("the patch changes nothing: the clean and corrupted runs agree at every patched cell")
    elif diff == runs.corrupt_diff:
        notes.append("the patch changes its cells but not the logit difference: nothing after them reaches the "
                     "last position's logits")
    return Patched(runs, trace, step, where, diff, n_changed, notes)


def prepare(model: str, text: str, corrupt: str, word: str, vs: str, **options: Any) -> Runs:
    """Run the clean and the corrupted text (the same number of tokens), with ``word`` and ``vs`` one token each."""
    return runs_of(make_request(model, text=text, command="patch", **options), corrupt, word, vs)


def runs_of(req: Request, corrupt: str, word: str, vs: str) -> Runs:
    """:func:`prepare` of a request made once (its name checked, its checkpoint opened): ``req`` is the clean run,
    ``req`` with ``corrupt`` for its text the corrupted one."""
    for what, t in (("--text", req.text), ("--corrupt", corrupt)):
        if not isinstance(t, str) or not t:
            raise UsageError(f"{what} must be one text; patching compares two runs of one text each")
    check_entry(req.model)
    tok = tokenizer_of(req)
    w, v = word_id(word, tok), word_id(vs, tok, "--vs")
    if w == v:
        raise UsageError(f"--vs {vs!r} is --word itself: their logit difference is 0; give another word")
    clean = run_request(req)
    bad = run_request(replace(req, text=corrupt))
    n, m = clean["logits"].shape[-2], bad["logits"].shape[-2]
    if n != m:
        raise InputError(f"the clean text has {n} tokens and the corrupted one {m}; patching needs runs of the "
                         f"same length: change a word for one of as many tokens ({clean.tokens_text()!r} vs "
                         f"{bad.tokens_text()!r})")
    if clean.config != bad.config:
        raise InputError("the two texts gave runs of different vocabularies (the word-level tokenizer grows with the "
                         "text); give both texts' words in each, or use --checkpoint")
    runs = Runs(clean, bad, w, v, word, vs)
    if runs.clean_diff == runs.corrupt_diff:
        raise InputError(f"the clean and corrupted runs give the same logit difference ({runs.clean_diff:.4g}); there "
                         "is nothing to recover: choose other words or another corruption")
    return runs


def patch(model: str, text: str, corrupt: str, word: str, vs: str, step: str, *, position: int | None = None,
          head: int | None = None, **options: Any) -> Patched:
    """Run ``text`` (clean) and ``corrupt``; record the corrupted run with ``step``'s cells at ``position`` and/or of
    ``head`` (None: all) taken from the clean run."""
    runs = prepare(model, text, corrupt, word, vs, **options)
    s = runs.corrupt.find(step)
    return patch_runs(runs, step, where_of(s, position, head))


@dataclass
class Sweep(Showable):
    """The recovered fraction for each patch point: rows are layers, columns positions (or heads). Prints (and
    draws in a notebook, coloured) as ``explain patch --sweep --plain`` does."""

    runs: Runs
    kind: str  # "resid", "mlp" or "heads"
    steps: list[str]  # one per row
    columns: list[str]
    recovered: Any  # (rows, columns)
    diffs: Any  # the patched logit differences
    executed: int = 0  # steps computed in all

    def where(self, row: int, col: int) -> tuple[str, Where]:
        s = self.runs.corrupt[self.steps[row]]
        return s.name, (where_of(s, head=col) if self.kind == "heads" else where_of(s, position=col))

    display_parts = sweep_parts  # what print() and a notebook show: explain patch --sweep --plain's heatmap

    def open(self, row: int, col: int) -> Patched:
        """The patched run of one cell, recorded (the sweep kept only its number)."""
        return patch_runs(self.runs, *self.where(row, col))

    def to_dict(self) -> dict[str, Any]:
        r = self.runs
        return {"kind": self.kind, "steps": self.steps, "columns": self.columns, "word": r.word_text,
                "vs": r.vs_text, "clean": r.clean_diff, "corrupt": r.corrupt_diff,
                "recovered": self.recovered.tolist(), "patched": self.diffs.tolist(), "notes": r.notes()}


SWEEP_STEPS = {"resid": "blocks.{}.resid_pre", "mlp": "blocks.{}.mlp_out", "heads": "blocks.{}.attn.z"}


def sweep_runs(runs: Runs, kind: str = "resid", executed: list[str] | None = None) -> Sweep:
    """Patch every layer × position (``resid``: each block's input; ``mlp``: each MLP output) or layer × head
    (``heads``: each head's z at every position), one at a time, keeping the logit difference of each. For each,
    only the steps after the patch point that the final residual needs are computed; the last position's
    logits of the two words follow from its last row."""
    if kind not in SWEEP_STEPS:
        raise UsageError(f"unknown sweep '{kind}'; use one of: {', '.join(SWEEP_STEPS)}")
    corrupt, clean = runs.corrupt, runs.clean
    stream = stream_of(corrupt)
    final = stream.norm.inputs[0]
    need = needed_for(corrupt, final)
    steps = stream.block_inputs() if kind == "resid" else \
        [SWEEP_STEPS[kind].format(i) for i in range(stream.n_layers)]
    first = corrupt[steps[0]]
    n_cols = first.shape[first.axes.index("head" if kind == "heads" else "pos")]
    diffs = np.zeros((len(steps), n_cols))
    count = [] if executed is None else executed
    for r, name in enumerate(steps):
        s = corrupt[name]
        for c in range(n_cols):
            where = where_of(s, head=c) if kind == "heads" else where_of(s, position=c)
            changed = rerun(corrupt, name, patched(s.output, clean[name].output, where), final, count, need)
            diffs[r, c] = runs.diff(_last_logits(stream, corrupt, changed.get(final, corrupt[final].output)))
    # the baseline through the same last-row arithmetic, so a patch that changes nothing recovers exactly 0
    base = runs.diff(_last_logits(stream, corrupt, corrupt[final].output))
    rec = (diffs - base) / (runs.clean_diff - base)
    cols = [f"head {h}" for h in range(n_cols)] if kind == "heads" else runs.words()
    return Sweep(runs, kind, steps, cols, rec, diffs, len(count))


def _last_logits(stream: Any, trace: Trace, resid: Any) -> Any:
    """The logits at the last position from the final residual: the run's own norm and unembedding ops on its
    last row only (the sweep needs two words of one position, not (T, vocab) logits)."""
    row = resid[..., -1:, :]
    norm, unembed = stream.norm, stream.logits
    x = ops.get(norm.op).compute(row, *[trace.value(n) for n in norm.inputs[1:]], **norm.attrs)
    return ops.get(unembed.op).compute(x, *[trace.value(n) for n in unembed.inputs[1:]], **unembed.attrs)


def sweep(model: str, text: str, corrupt: str, word: str, vs: str, kind: str = "resid", **options: Any) -> Sweep:
    """:func:`prepare` the two runs, then :func:`sweep_runs`."""
    return sweep_runs(prepare(model, text, corrupt, word, vs, **options), kind)
