"""Rich renderables for next-token predictions (:mod:`explain.report.predict`) and a generation's summary, shared by
``--plain`` and the TUI's predictions pane."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain.core.names import gen_number, gen_step
from explain.core.text import visible
from explain.engine.api import generated_ids
from explain.report.predict import Predictions
from explain.trace import Trace

_BYTES = re.compile(r"(?:\\x[0-9a-f]{2})+")


def joined(labels: list[str], sep: str) -> str:
    """Token labels as one text. Byte-level tokens (``sep`` "") may split a character over several tokens, each
    labelled by its byte ('\\xe6', '\\x97', '\\xa5'): side by side the bytes decode ('日'); bytes that stay
    incomplete keep their escapes, and what they decode to is made visible as every label is."""
    text = sep.join(labels)
    if sep:
        return text
    return _BYTES.sub(lambda m: visible(bytes.fromhex(m[0].replace("\\x", "")).decode("utf-8", "backslashreplace")),
                      text)


def running_text(labels: list[str], sep: str) -> str:
    """Tokens' labels as the text they make, spaces as spaces: the running text of a generation reads as a
    sentence (and as a decoder writes it), in the TUI's header and in ``--plain`` alike; a table of tokens keeps
    ``␣`` where it matters which token a space belongs to. ``⏎`` stays visible: the text is one line."""
    return joined(labels, sep).replace("␣", " ")


def predictions_view(p: Predictions, title: bool = True) -> Group:
    """``next after position 3 (happy)``, then rank, token, p, log p; the actual next token marked (and added
    below the top k with its rank when it is not among them)."""
    parts: list[Any] = []
    if title:
        parts.append(Text(f"next token after position {p.position}" + (f" {repr_token(p.after)}" if p.after else "")
                          + (f", sequence {p.batch}" if p.batch else ""), style="bold"))
    table = Table(box=None, padding=(0, 1), show_header=True, header_style="bold")
    model = p.used is not None  # a draw: say which of two probabilities each is
    for name, justify in (("rank", "right"), ("token", "left"), ("p model" if model else "p", "right"),
                          ("log p", "right"), ("", "left")):
        table.add_column(name, justify=justify, no_wrap=True)
    shown = list(p.top)
    if p.actual is not None and all(c.id != p.actual.id for c in shown):
        shown.append(p.actual)
    for c in shown:
        mark = p.actual_is if p.actual is not None and c.id == p.actual.id else ""
        style = "bold green" if mark else ""
        table.add_row(str(c.rank), Text(repr_token(c.token), style=style), f"{c.prob:.4f}", f"{c.logprob:.3f}",
                      Text(f"← {mark}" if mark else "", style="green"))
    parts.append(table)
    if p.actual is not None:
        where = " (the model's, before sampling)" if model else ""
        parts.append(Text(f"{p.actual_is}: {repr_token(p.actual.token)} (id {p.actual.id}), rank {p.actual.rank}, "
                          f"p = {p.actual.prob:.4g}{where}", style="dim"))
    if model:
        parts.append(Text(f"the draw used p = {p.used:.4g}: {p.used_by or 'after the filters'}", style="dim"))
    return Group(*parts)


def repr_token(token: str) -> str:
    """A token as shown in a table: quoted, so a leading space (␣) or an empty label is visible."""
    return f"'{token}'"


def text_so_far(trace: Trace, index: int, batch: int = 0) -> Text | None:
    """On a generation's steps (those of a new token, from the first one on), the text as it stands at step
    ``index``: the prompt, ``▸``, then the tokens drawn at or before that step (``the cat is ▸ machines man``).
    Spaces are spaces (:func:`running_text`, as ``--plain`` prints it); None on any other step."""
    gen = trace.generation
    if gen is None or not gen.steps or index >= len(trace):
        return None
    first = next((s.index for s in trace.steps if gen_number(s.name) is not None), None)
    if first is None or index < first:
        return None
    vocab = trace.labels.get("vocab") or []
    batch = batch if 0 <= batch < len(gen.prompt) else 0

    def label(i: int) -> str:
        return vocab[i] if 0 <= i < len(vocab) else f"#{i}"

    sep = "" if any("␣" in t for t in vocab[:2000]) else " "
    drawn = [int(trace[n].output[batch, 0]) for n in gen.steps if trace[n].index <= index]
    text = Text.assemble(("text so far: ", "dim"), running_text([label(i) for i in gen.prompt[batch]], sep), " ▸ ",
                         (running_text([label(i) for i in drawn], sep), "bold green"))
    if not drawn:
        text.append("(nothing drawn yet)", "dim")
    return text


def generation_view(trace: Trace) -> Group:
    """What a generation made: the prompt, the new tokens with their probabilities, how they were chosen."""
    gen = trace.generation
    assert gen is not None, "not a generation's trace"
    vocab = trace.labels.get("vocab") or []

    def label(i: int) -> str:
        return vocab[i] if i < len(vocab) else f"#{i}"

    parts: list[Any] = [Text(f"generated {len(gen.steps)} token(s), {gen.describe()}", style="bold")]
    for b, ids in enumerate(generated_ids(trace)):
        # byte-level BPE labels carry their own spaces (␣); the word-level tokenizer's words need one between
        sep = "" if any("␣" in t for t in vocab[:2000]) else " "
        prompt = running_text([label(i) for i in gen.prompt[b]], sep)
        new = running_text([label(i) for i in ids], sep)
        parts.append(Text.assemble((prompt + sep, ""), (new, "bold green")))
        table = Table(box=None, padding=(0, 1), show_header=True, header_style="bold")
        for col in ("new", "token", "id", "p (drawn from)", "how"):
            table.add_column(col, no_wrap=True)
        for n, (name, i) in enumerate(zip(gen.steps, ids)):
            probs = trace[gen_step(n, "probs")].output
            how = "argmax" if trace[name].op == "argmax" else f"u = {float(trace[gen_step(n, 'u')].output[b, 0]):.4f}"
            table.add_row(str(n), repr_token(label(i)), str(i), f"{float(probs[b, 0, i]):.4f}", how)
        parts.append(table)
    if gen.stopped_at_eos:
        eos = gen.sampling.eos
        parts.append(Text(f"stopped: every sequence drew {repr_token(label(eos))} (id {eos}), the end-of-text token, "
                          f"before {gen.sampling.max_new_tokens} tokens (--ignore-eos goes on)", style="dim"))
    return Group(*parts)
