"""The logit lens (nostalgebraist 2020): the residual stream after each block and after each attention, read
through the model's own final norm and unembedding as if the model ended there. Each read is recorded as three
steps (``lens.<point>.ln_final``, ``lens.<point>.logits``, ``lens.<point>.probs``), replays of the run's own
``ln_final`` and ``logits`` steps and a softmax, so the lens at the last point is the run's logits exactly.

:func:`lens` runs a model and records its lens; :func:`record_lens` adds the lens to a recorded run;
:func:`summary` gives, per point, the top word at each position and a chosen word's rank and probability.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explain.core.shown import Grid, Line, Part, Showable
from explain.core.text import quoted
from explain.engine.api import run_request
from explain.engine.memory import check_memory
from explain.interp import names
from explain.interp.stream import (
    finish,
    read_position,
    replay,
    request_for,
    resume,
    stream_of,
    tokenizer_of,
    word_id,
)
from explain.ops.base import num
from explain.trace import Trace


def record_lens(trace: Trace) -> Trace:
    """``trace`` with the lens of every residual point recorded after its steps (refused before allocating if
    it would not fit: each point's logits and probabilities are as large as the run's logits)."""
    stream = stream_of(trace)
    if names.lens_logits(stream.points()[0][1]) in trace:
        return trace
    for shape_only in (True, False):  # the plan first: refuse before allocating
        rec = resume(trace, shape_only)
        for _, point in stream.points():
            with rec.scope(names.lens_scope(point)):
                x = replay(rec, stream.norm, "ln_final", {stream.norm.inputs[0]: rec.ref(point)})
                logits = replay(rec, stream.logits, "logits", {stream.norm.name: x})
                rec.op("softmax", "probs", logits, sym="p", note="The lens's probabilities: softmax of its logits.")
        out = finish(rec, trace)
        if shape_only:
            check_memory(out)
    return out


@dataclass
class LensRow:
    """One point of the lens: its label, its logits step, the top word at each position (id, word,
    probability) and the chosen word's rank (1 = top) and probability at the chosen position."""

    label: str
    step: str
    top: list[tuple[int, str, float]]
    rank: int | None = None
    prob: float | None = None


@dataclass
class Lens(Showable):
    """What :func:`lens` gives: the trace with the lens recorded, the word and position read, one row per point.
    ``print(lens)`` writes the tables ``explain lens --plain`` prints; a notebook draws them (``_repr_html_``)."""

    trace: Trace
    word: int | None
    word_text: str
    position: int
    rows: list[LensRow] = field(default_factory=list)
    note: str = ""  # why this position was read (the word is the next token there), or ""

    def grid_parts(self, digits: int = 2) -> tuple[Line, Grid]:
        """Points down, positions across: the top word at each position and its probability (the position read
        in bold), under its caption."""
        tokens = list(self.trace.labels.get("pos") or [])
        grid = Grid(("layer", *(f"{t} {tok}" for t, tok in enumerate(tokens))),
                    tuple((r.label, *(f"{w} {num(p, digits)}" for _, w, p in r.top)) for r in self.rows),
                    right=(True, *(False for _ in tokens)), bold=1 + self.position)
        return Line("logit lens: the top word at each position, read after each layer", "caption"), grid

    def word_parts(self, digits: int = 4) -> tuple[Line, Grid]:
        """Points down: the top word at the position read, and the chosen word's rank and probability there."""
        pos = self.position
        tokens = list(self.trace.labels.get("pos") or [])
        after = tokens[pos] if pos < len(tokens) else str(pos)
        columns = ["layer", "top word", "p"]
        if self.word is not None:
            columns += [f"rank of {quoted(self.word_text)}", f"p({quoted(self.word_text)})"]
        rows = []
        for r in self.rows:
            _, w, p = r.top[pos]
            rows.append((r.label, w, num(p, digits), *((str(r.rank), num(r.prob, digits)) if self.word is not None
                                                       else ())))
        return (Line(f"after position {pos} ({after}): the next word, read after each layer", "caption"),
                Grid(tuple(columns), tuple(rows), right=(True, False, True, True, True)))

    def display_parts(self) -> list[Part]:
        """Why this position was read (``explain lens`` says it on stderr), then both tables."""
        return [*([Line(self.note, "note")] if self.note else []), *self.grid_parts(), *self.word_parts()]

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.trace.config.model, "tokens": list(self.trace.labels.get("pos") or []),
                "position": self.position, "word": self.word_text, "word_id": self.word,
                "layers": [{"layer": r.label, "step": r.step, "rank": r.rank, "prob": r.prob,
                            "top": [{"id": i, "word": w, "prob": p} for i, w, p in r.top]} for r in self.rows]}


def summary(trace: Trace, word: int | None = None, position: int = -1, item: int = 0,
            word_text: str = "") -> Lens:
    """Per lens point: the top word and its probability at every position, and ``word``'s rank and probability
    at ``position``, read from the recorded steps."""
    stream = stream_of(trace)
    vocab = trace.labels.get("vocab")
    T = trace[stream.logits.name].shape[-2]
    pos = position % T
    out = Lens(trace, word, word_text, pos)
    for label, point in stream.points():
        logits = np.asarray(trace[names.lens_logits(point)].output)[item]  # (T, vocab)
        probs = np.asarray(trace[names.lens_probs(point)].output)[item]
        top = [(int(i), vocab[int(i)] if vocab is not None else str(int(i)), float(probs[t, i]))
               for t, i in enumerate(np.argmax(logits, axis=-1))]
        row = LensRow(label, names.lens_logits(point), top)
        if word is not None:
            row.rank = int((logits[pos] > logits[pos, word]).sum()) + 1
            row.prob = float(probs[pos, word])
        out.rows.append(row)
    return out


def lens(model: str, word: str | None = None, *, position: int | None = None, **options: Any) -> Lens:
    """Run ``model`` (a pre-norm model: ``gpt``, a checkpoint) with :func:`explain.engine.api.run`'s options, record its
    logit lens, and summarise it for ``word`` (one token of the vocabulary: for byte-level BPE with its leading
    space, ``' Paris'``) at ``position`` (default: the last position where ``word`` is the next token of the text,
    else the last; :func:`~explain.interp.stream.read_position`)."""
    req = request_for(model, options, "the logit lens", "lens")  # refused before the run, in one line
    word_id_ = word_id(word, tokenizer_of(req)) if word is not None else None
    trace = run_request(req)
    pos, note = read_position(trace, word_id_, position, word or "")
    out = summary(record_lens(trace), word_id_, pos, word_text=word or "")
    out.note = note
    out.trace.lens = out  # the TUI's lens screen follows the word asked for
    return out
