"""Direct logit attribution: the final residual at one position split into the parts that wrote it (the token
and position embeddings, each head's z·W_O, each attention bias b_O, each MLP output), each part's contribution
to a logit (or a logit difference with ``vs``) through the final norm with its scale frozen at its value in the
run (TransformerLens's convention), and their sum, which is the run's logit.

Recorded as steps after the run (``attrib.blocks.L.attn.result``, ``attrib.parts``, ``attrib.normed``,
``attrib.contributions``, ``attrib.total``): the drill-down of ``attrib.total`` shows the sum beside the logit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from explain.core.errors import UsageError
from explain.core.shown import Grid, Line, Part, Showable
from explain.core.text import quoted
from explain.engine.api import run_request
from explain.interp import names
from explain.interp.stream import (
    Stream,
    finish,
    read_position,
    ref,
    request_for,
    resume,
    stream_of,
    tokenizer_of,
    word_id,
)
from explain.ops.base import num, residue
from explain.trace import Trace
from explain.trace.recorder import Recorder, Ref

CONVENTION = ("each part goes through the final norm with the scale σ of the whole residual frozen at its value "
              "in this run (TransformerLens's convention), so the parts add up to the logit exactly")


def _parts(rec: Recorder, trace: Trace, stream: Stream) -> tuple[list[Ref], list[str], list[str]]:
    """The refs that sum to the final residual, one label per row they give the stack, and the same label short
    enough for a column of the step's grid (TransformerLens's ``L1H2`` for block 1's head 2)."""
    refs: list[Ref] = []
    labels: list[str] = []
    short: list[str] = []
    first = trace[stream.first]
    for n in (first.inputs if first.op == "add" else (first.name,)):  # token + position embeddings
        refs.append(ref(rec, n))
        labels.append(n)
        short.append("pos" if n == "pos_embed" else n)
    for i in range(stream.n_layers):
        attn_out = trace[trace[names.resid_mid(i)].inputs[1]]
        merged = trace[attn_out.inputs[0]] if attn_out.inputs[0] in trace else None
        if attn_out.op == "linear" and merged is not None and merged.op == "merge_heads":
            z = ref(rec, merged.inputs[0])  # (B, h, T, m)
            refs.append(rec.op("head_result", names.head_result(i), z, ref(rec, attn_out.inputs[1]), sym="r"))
            labels += [f"blocks.{i} head {h}" for h in range(z.shape[-3])]
            short += [f"L{i}H{h}" for h in range(z.shape[-3])]
            if len(attn_out.inputs) > 2:
                refs.append(ref(rec, attn_out.inputs[2]))
                labels.append(f"blocks.{i} attn bias")
                short.append(f"L{i} bias")
        else:
            refs.append(ref(rec, attn_out.name))
            labels.append(attn_out.name)
            short.append(f"L{i} attn")
        mlp_out = trace[names.resid_post(i)].inputs[1]
        refs.append(ref(rec, mlp_out))
        labels.append(mlp_out)
        short.append(f"L{i} MLP")
    return refs, labels, short


def record_attribution(trace: Trace, word: int, vs: int | None = None, position: int = -1, item: int = 0) -> Trace:
    """``trace`` with the attribution of logit ``word`` (minus logit ``vs``) at ``position`` recorded after it."""
    stream = stream_of(trace)
    T = trace[stream.logits.name].shape[-2]
    pos = position % T
    norm, unembed = stream.norm, stream.logits
    rec = resume(trace)
    with rec.scope(names.ATTR):
        parts, labels, short = _parts(rec, trace, stream)
        dims = tuple(len(r.shape) for r in parts)
        stacked = rec.op("stack_parts", "parts", *parts, dims=dims, item=item, pos=pos, labels=tuple(labels),
                         sym="parts")
        normed = rec.op("frozen_norm", "normed", stacked, ref(rec, norm.inputs[0]), ref(rec, norm.inputs[1]),
                        item=item, pos=pos, eps=norm.attrs.get("eps", 1e-5), centre=stream.centre,
                        plus_one=norm.attrs.get("plus_one", False), sym="n")
        beta = [ref(rec, norm.inputs[2])] if len(norm.inputs) > 2 else []
        bias = [ref(rec, unembed.inputs[2])] if len(unembed.inputs) > 2 else []
        labels.append("final norm β" + (" and unembedding bias" if bias else "") if beta else
                      "unembedding bias" if bias else "(no bias)")
        contrib = rec.op("part_logits", "contributions", normed, ref(rec, unembed.inputs[1]), *beta, *bias,
                         word=word, vs=vs, transpose_w=unembed.attrs.get("transpose_w", False), beta=bool(beta),
                         bias=bool(bias), labels=tuple(labels), sym="c", note=CONVENTION[0].upper() + CONVENTION[1:] + ".")
        rec.op("total", "total", contrib, ref(rec, unembed.name), item=item, pos=pos, word=word, vs=vs,
               labels=tuple(labels), sym="Σc")
    out = finish(rec, trace)
    # the parts' axis is labelled like the positions' (the grid's columns name them); the stack has every row
    # but the last, which only the contributions add (the final norm's β, the unembedding's bias)
    out.labels = {**out.labels, "part": [*short, "β+bias" if beta and bias else "β" if beta else "bias" if bias
                                         else "none"]}
    return out


def without_attribution(trace: Trace) -> Trace:
    """The trace without an earlier attribution's steps (a new one replaces it)."""
    if not any(s.group[:1] == (names.ATTR,) for s in trace):
        return trace
    keep = [s for s in trace if s.group[:1] != (names.ATTR,)]
    labels = {k: v for k, v in trace.labels.items() if k != "part"}  # the parts were the attribution's
    out = Trace(trace.config, [replace(s, index=i) for i, s in enumerate(keep)], trace.params, trace.specs,
                labels, trace.shape_only, trace.batch_labels)
    out.generation, out.backward = trace.generation, trace.backward
    return out.keeps_run_of(trace)


@dataclass
class Attribution(Showable):
    """What :func:`attribute` gives: the trace with the attribution recorded, and each part's contribution.
    ``print(a)`` writes the table ``explain attribute --plain`` prints; a notebook draws it (``_repr_html_``)."""

    trace: Trace
    word: int
    vs: int | None
    word_text: str
    vs_text: str
    position: int
    parts: list[tuple[str, float]] = field(default_factory=list)  # in the stack's order
    total: float = 0.0
    logit: float = 0.0  # what the run computed: logit[word] (− logit[vs])
    note: str = ""  # why this position was read (the word is the next token there), or ""

    def ranked(self) -> list[tuple[str, float]]:
        return sorted(self.parts, key=lambda p: -abs(p[1]))

    def table_parts(self, digits: int = 4) -> tuple[Line, Grid, Line, Line]:
        """The caption, the parts ranked by size (rank, part, contribution), their sum beside the run's logit,
        and the convention the numbers follow."""
        tokens = list(self.trace.labels.get("pos") or [])
        what = f"logit[{quoted(self.word_text)}]" + (f" − logit[{quoted(self.vs_text)}]" if self.vs is not None else "")
        after = tokens[self.position] if self.position < len(tokens) else str(self.position)
        grid = Grid(("rank", "part", "contribution"),
                    tuple((str(i), part, num(v, digits)) for i, (part, v) in enumerate(self.ranked(), 1)),
                    right=(True, False, True))
        sums = (f"sum of the {len(self.parts)} contributions = {num(self.total, digits)}; the run's {what} = "
                f"{num(self.logit, digits)} (difference {residue(self.total - self.logit)})")
        return (Line(f"{what} after position {self.position} ({after}): who wrote it", "caption"), grid, Line(sums),
                Line(f"Note: {CONVENTION}.", "note"))

    def display_parts(self) -> list[Part]:
        """Why this position was read (``explain attribute`` says it on stderr), then the table."""
        return [*([Line(self.note, "note")] if self.note else []), *self.table_parts()]

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.trace.config.model, "position": self.position, "word": self.word_text,
                "word_id": self.word, "vs": self.vs_text or None, "vs_id": self.vs, "convention": CONVENTION,
                "parts": [{"part": p, "contribution": v} for p, v in self.ranked()], "sum": self.total,
                "logit": self.logit}


def summary(trace: Trace, word: int, vs: int | None, position: int, word_text: str = "",
            vs_text: str = "") -> Attribution:
    step = trace[names.attr("contributions")]
    total = trace[names.attr("total")]
    item, pos = total.attrs["item"], total.attrs["pos"]
    logits = trace["logits"].output
    run = float(logits[item, pos, word] - (logits[item, pos, vs] if vs is not None else 0.0))
    parts = list(zip(step.attrs["labels"], (float(v) for v in step.output)))
    return Attribution(trace, word, vs, word_text, vs_text, pos, parts, float(total.output), run)


def attribute(model: str, word: str, vs: str | None = None, *, position: int | None = None,
              **options: Any) -> Attribution:
    """Run ``model`` with :func:`explain.engine.api.run`'s options and attribute logit ``word`` (minus logit ``vs``) at
    ``position`` (default: the last position where ``word`` is the next token of the text, else the last;
    :func:`~explain.interp.stream.read_position`) to the parts of the final residual."""
    req = request_for(model, options, "attribution", "attribute")
    tok = tokenizer_of(req)
    w = word_id(word, tok)
    v = word_id(vs, tok, "--vs") if vs is not None else None
    if v == w:
        raise UsageError(f"--vs {vs!r} is --word itself: their logit difference is 0; give another word")
    trace = run_request(req)
    pos, note = read_position(trace, w, position, word)
    out = summary(record_attribution(trace, w, v, pos), w, v, pos, word, vs or "")
    out.note = note
    return out
