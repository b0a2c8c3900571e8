"""The op kind that ends a patched run (activation patching): the recovered fraction, how much of the clean run's
logit difference the patch brings back to the corrupted run, (patched − corrupted) / (clean − corrupted), read from
the three runs' logits at one position (issue 42 item 8: tutorial 20's 0.88 was on no step)."""

from __future__ import annotations

from typing import Any

from explain.core.text import quoted
from explain.ops.base import CellExplanation, Op, Syms, arg, num, register


@register
class Recovered(Op):
    """Inputs: the patched run's logits, the clean run's, the corrupted run's (each (batch, T, vocab)); attributes:
    the item and position read and the two words compared (``word``, ``vs``)."""

    kind = "recovered"
    differentiable = ()
    reads_vocab = True  # the two words compared are named by their words
    default_note = ("The recovered fraction: how much of the clean run's logit difference the patch brings back to "
                    "the corrupted run. 1 is all of it, 0 none; it divides by the gap between the clean and the "
                    "corrupted runs, so a small gap makes small changes read large.")

    def shape(self, *shapes, **attrs):
        return ()

    def axes(self, *axes, **attrs):
        return ()

    def formula(self, syms: Syms, **attrs) -> str:
        # the three inputs are all logits (one symbol): the formula names the runs instead
        return f"{syms.out} = (Δ patched − Δ corrupted) / (Δ clean − Δ corrupted),  Δ = logit[word] − logit[vs]"

    def signature(self, shapes, out, **attrs) -> str:
        return "3 runs' logits → ()"

    def source(self, out, ins, item: int = 0, pos: int = 0, word: int = 0, vs: int = 0, **attrs) -> str:
        p, c, b = (f"({x}[{int(item)}, {int(pos)}, {int(word)}] - {x}[{int(item)}, {int(pos)}, {int(vs)}])"
                   for x in ins)
        return f"({p} - {b}) / ({c} - {b})"

    def feeds(self, index, inputs, item: int = 0, pos: int = 0, **attrs):
        return [(item, pos, slice(None))] * 3

    def explain(self, index, inputs, output, syms: Syms, item: int = 0, pos: int = 0, word: int = 0, vs: int = 0,
                vocab: Any = None, **attrs) -> CellExplanation:
        diffs = [float(x[item, pos, word] - x[item, pos, vs]) for x in inputs]
        patched, clean, corrupt = diffs

        def name(i: int) -> str:
            return vocab[i] if vocab is not None and 0 <= i < len(vocab) else str(i)

        rows = [("clean", clean), ("corrupted", corrupt), ("patched", patched)]
        return CellExplanation((), float(output), f"{syms.out}: the recovered fraction of logit[{quoted(name(word))}] − "
                               f"logit[{quoted(name(vs))}] at position {pos}", ("run", "logit difference"), rows,
                               [f"the patch moved it by {num(patched - corrupt)} of the {num(clean - corrupt)} "
                                "between the corrupted and the clean run",
                                f"({num(patched)} − {arg(corrupt)}) / ({num(clean)} − {arg(corrupt)}) = "
                                f"{num(output)}"])
