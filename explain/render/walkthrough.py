"""A tutorial as text (``explain tutorial NAME --plain``): its title and summary, then every stop in order,
each with its narration, its step, the focused cell's explanation, its question and what it checked."""

from __future__ import annotations

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from explain.ops.base import precision as num_precision
from explain.render.narration import narration_markdown
from explain.render.plain import print_step
from explain.render.step import explanation_view
from explain.trace import Trace
from explain.tutorial import Tutorial, stop_step


def print_walkthrough(console: Console, tut: Tutorial, trace: Trace, answers: bool = False,
                      precision: int = 4) -> None:
    """Every stop of a tutorial as text: a rule with its title, the narration (markdown), the step, the focused
    cell's explanation, the question (and answer), and what the stop checked."""
    console.print(Text(tut.title, style="bold"))
    console.print(Text(" ".join(tut.summary.split()), style="italic"))
    tokens = trace.tokens_text()
    console.print(Text(f"{tut.name}: model {tut.model}, {len(tut.stops)} stops, {len(trace)} steps, "
                       f"{trace.n_params:,} parameters; tokens: {tokens}", style="dim"))
    console.print()
    checks = trace.checks
    for stop in tut.stops:
        step = stop_step(trace, stop)
        console.print(Rule(Text(f"Stop {stop.number}/{len(tut.stops)}: {stop.title}", style="bold magenta"),
                           align="left"))
        console.print(narration_markdown(stop.narration.strip()))
        console.print()
        # show the slice (head, batch) that holds the focused cell
        lead = tuple(stop.cell[:-2]) if stop.cell is not None and len(stop.cell) > 2 else None
        digits = stop.precision if stop.precision is not None else precision  # a stop may set its own
        print_step(console, trace, step, digits, lead=lead)
        if stop.cell is not None:
            with num_precision(digits):  # the explanation's arithmetic at --precision, as its table
                console.print(explanation_view(trace.explain(step, stop.cell), digits))
            console.print()
        if stop.question:
            console.print(Text.assemble(("Question: ", "bold"), stop.question.strip()))
            if answers and stop.answer:
                console.print(Text.assemble(("Answer: ", "bold"), " ".join(stop.answer.split())))
            console.print()
        mine = [c for c in checks if c.stop == stop.number and c.kind != "cell"]
        if mine:
            console.print(Text("✓ checked: " + "; ".join(f"{c.kind} ({c.detail})" for c in mine), style="dim green"))
            console.print()
