"""Warnings for splits and merges of the model's width: heads first, then the head width (C = H·Dh).

The projection that makes q, k and v lays its output out head by head, so a split of the width into (Dh, H)
(``view(B, T, Dh, H)``, an einops ``(d h)``) or a merge of (Dh, H) back into it reads every 'head' from all of
them; and an einops length given the other axis's name (``h=Dh``) swaps the two. Part of the rules of
:mod:`explain.check.semantic`, loaded only when a reshape splits or merges named axes, or an einops pattern
has a group or a named length.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check.names import Ax, fmt_ax
from explain.check.node import Node
from explain.check.roles import POSITIONS, letter_role, role, role_of_name, word
from explain.check.semantic import parenthesized, warn, written_here

if TYPE_CHECKING:
    from explain.check.expr import Checker

Span = tuple[int, int]


def _head_order(names: list[Ax]) -> tuple[int, int] | None:
    """Positions (i, j) of a head width written before the heads, in a split or merge of the model's width."""
    roles = [role(a) for a in names]
    if "head_dim" in roles and "heads" in roles and roles.index("head_dim") < roles.index("heads"):
        return roles.index("head_dim"), roles.index("heads")
    return None


def reshape_order(ck: Checker, call_node: Node, this: Node, sources: list[list[int]], claims: tuple[Ax, ...],
                  texts: list[str], method: str, span: Span) -> None:
    """A view/reshape that splits the width into (Dh, H) or merges (Dh, H) into it: heads come first."""
    out_names = call_node.names
    for i in range(len(this.shape)):  # a split: input axis i feeds several output axes
        outs = [j for j, src in enumerate(sources) if src == [i]]
        if len(outs) < 2 or role(this.names[i]) not in ("feature", None):
            continue
        order = _head_order([out_names[j] for j in outs])
        if order is None:
            continue
        a, b = outs[order[0]], outs[order[1]]
        swapped = list(texts)
        swapped[a], swapped[b] = texts[b], texts[a]
        new = f"{parenthesized(this)}.{method}({', '.join(swapped)})"
        start, end = call_node.start, call_node.end
        warn(ck, f"{method} splits {fmt_ax(this.names[i]) if this.names[i] else f'axis {i}'} into "
                f"({fmt_ax(out_names[a])}, {fmt_ax(out_names[b])}), the head width first, but the projection lays its "
                f"output out heads first (C = H·Dh), so each 'head' would mix every head's values: {new}",
                span[0], span[1], [this], (start, end, new) if written_here(ck, call_node) else None)
        return
    for src in sources:  # a merge: one output axis takes several input axes
        if len(src) < 2:
            continue
        order = _head_order([this.names[i] for i in src])
        if order is None:
            continue
        a, b = src[order[0]], src[order[1]]
        swap = f".transpose({a}, {b})" if ck.torch or method == "view" else f".swapaxes({a}, {b})"
        then = ".contiguous()" if method == "view" else ""
        start = this.start
        new = f"{parenthesized(this)}{swap}{then}.{method}({', '.join(texts)})"
        warn(ck, f"{method} merges {fmt_ax(this.names[a])} before {fmt_ax(this.names[b])} into one axis: the output "
                f"projection reads the width heads first (C = H·Dh); swap them first: {new}", span[0], span[1],
                [this], (start, call_node.end, new) if written_here(ck, call_node) else None)
        return


def einops_lengths(ck: Checker, call: ast.AST, left: list[list[str]], right: list[list[str]],
                   lengths: dict[str, tuple[int, Ax]], size: dict[str, int], span: Span, x: Node) -> None:
    """``rearrange(x, "b t (h d) -> …", h=Dh)``: a length named for another role; ``(d h)``: heads last."""
    groups = [g for g in left + right if len(g) > 1]
    for letter, (n, named) in lengths.items():
        if named is None:
            continue
        group = next((g for g in groups if letter in g), [letter])
        want, got = letter_role(letter, group), role(named)
        if want is None or got is None or want == got or {want, got} <= set(POSITIONS):
            continue
        others = [o for o in group if o != letter and not o.isdigit()]
        right_name = next((d for d in ck.b.dims if role_of_name(d) == want and d not in ("self",)), None)
        kw = next((k for k in getattr(call, "keywords", []) if k.arg == letter), None)
        fix = (*ck.span(kw.value), right_name) if kw is not None and right_name else None
        partner = f"; so {others[0]} gets {size.get(others[0], '?')}" if others else ""
        if others and right_name and size.get(others[0]) == ck.b.dims.get(right_name):
            partner += f", the size of {right_name}: the two are swapped"
        warn(ck, f"{letter}={fmt_ax(named)} gives {letter} the size of {fmt_ax(named)} ({n}, {word(got)}), but {letter} "
                f"in ({' '.join(group)}) stands for {word(want)}{partner}" +
                (f"; write {letter}={right_name}" if right_name else ""), span[0], span[1], [x], fix)
        return
    for g in groups:
        roles = [letter_role(a, g) for a in g]
        if "head_dim" in roles and "heads" in roles and roles.index("head_dim") < roles.index("heads"):
            heads = g[roles.index("heads")]
            good = [heads] + [a for a in g if a != heads]
            old_group, new_group = f"({' '.join(g)})", f"({' '.join(good)})"
            fix = None
            pattern = call.args[1] if isinstance(call, ast.Call) and len(call.args) > 1 else None
            if pattern is not None and isinstance(pattern, ast.Constant) and old_group in ck.text(pattern):
                fix = (*ck.span(pattern), ck.text(pattern).replace(old_group, new_group))
            warn(ck, f"the einops group {old_group} puts the head width before the heads, but the projection lays the "
                     f"width out heads first (C = H·Dh): write {new_group}", span[0], span[1], [x], fix)
            return


