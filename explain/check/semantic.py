"""Warnings for code whose shapes fit but whose named axes say it computes the wrong thing.

A shape check passes ``F.softmax(scores, dim=1)`` on ``[B, H, T, T]`` scores: every axis has a size, so every
softmax fits. The names say more (:mod:`explain.check.roles`): axis 1 holds the heads, and attention weights
sum to 1 over the keys. Each rule here reads the roles and, only when they say so, records a warning with the
reason and the fix (:class:`~explain.check.errors.Advice`); ``--strict`` makes it an error. An axis whose role
is unknown is never warned about. The rules:

* a softmax over an axis that is not a key, vocabulary or expert axis, where one exists (over the heads, the
  batch, the queries);
* a mean/var/std used to normalise over the sequence or the batch where a feature axis exists, and
  ``F.layer_norm`` over them;
* a split or merge of the model's width with the head width before the heads (``view(B, T, Dh, H)``,
  ``"b t (d h)"``), and an einops length given the other axis's name (``h=Dh``);
* a mask applied to the softmax's output instead of the scores;
* scores scaled by the square root of an axis other than the one their dot products sum over.

Loaded only when a cheap test where the operation is made says a rule may apply (bench_check_startup).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check.errors import Advice
from explain.check.names import Ax, fmt_ax, fmt_names
from explain.check.node import Node, origin
from explain.check.roles import POSITIONS, SOFTMAX_OVER, role, word
from explain.core.errors import ShapeError

if TYPE_CHECKING:
    from explain.check.expr import Checker

Span = tuple[int, int]


def parenthesized(node: Node) -> str:
    return node.text if node.atomic else f"({node.text})"


def written_here(ck: Checker, node: Node) -> bool:
    """Whether ``node`` was written in the source being checked now (not on an earlier line of a function)."""
    return node.info.get("src", ck.src) == ck.src and ck.src[node.start:node.end] == node.text


def warn(ck: Checker, message: str, start: int, end: int, operands: list[Node],
         fix: tuple[int, int, str] | None = None, at: Node | None = None) -> Advice | None:
    """Record a warning (:class:`Advice`) with the same caret display as an error; ``at``: a node made on an
    earlier line of a function, whose line the caret and the fix are on (the fix becomes an edit of it)."""
    if any(a.message == message for a in ck.advice):
        return None
    here, src, line = ck.src, ck.src, None
    if at is not None and at.info.get("src") not in (None, ck.src):
        src, line = at.info["src"], at.info["line"]
    ck.src = src  # the caret goes under the line the warning is about
    try:
        display = ck.fail(ShapeError(message), start, end, operands).display
    finally:
        ck.src = here
    advice = Advice(message, display, None if line is not None else fix, line)
    if line is not None and fix is not None:
        advice.edits.append((line, src[fix[0]:fix[1]], fix[2]))
    ck.advice.append(advice)
    return advice


# --- softmax -------------------------------------------------------------------------------------------------

def softmax_axis(ck: Checker, node: Node, k: int, arg: ast.expr | None, span: Span) -> None:
    """A softmax over axis ``k`` (not the last): warn if its role is not what a softmax normalises over."""
    names, n = node.names, len(node.shape)
    roles = [role(a) for a in names]
    here = roles[k]
    if here is None:
        return
    # The axis it should be over: the last if that is a key/vocabulary/expert axis, else the last such axis.
    want = n - 1 if roles[-1] in SOFTMAX_OVER else next(
        (i for i in range(n - 1, -1, -1) if roles[i] in SOFTMAX_OVER and roles[i] != "seq"), None)
    if want is None:
        want = next((i for i in range(n - 1, -1, -1) if roles[i] == "seq"), None)
    if want is None or want == k:
        return
    if here in SOFTMAX_OVER and not (here in POSITIONS and roles[want] in POSITIONS and want > k):
        return  # over the vocabulary or the experts, say, with positions after it: not for us to judge
    what = "the queries" if here in POSITIONS else word(here)
    over = {"vocab": "a distribution over the vocabulary", "experts": "router weights over the experts"}.get(
        roles[want], "attention weights sum to 1 over the keys")
    fix = None
    new = str(want - n)
    if arg is not None and written_here(ck, node):
        fix = (*ck.span(arg), new)
    warn(ck, f"softmax over {fmt_ax(names[k])} (axis {k}, {what}) of {fmt_names(names)}: {over}, axis "
            f"{want - n} ({fmt_ax(names[want])}); write {'axis' if 'axis=' in node.text else 'dim'}={new}",
            span[0], span[1], node.children[:1], fix)


# --- normalisation ---------------------------------------------------------------------------------------------

_CARRY = ("sqrt", "rsqrt", "add", "sub", "pow", "div", "mul", "neg", "name", "pos", "float", "to", "contiguous")


def _statistic(node: Node, pending: list[Node], depth: int = 0) -> Node | None:
    """The flagged reduction ``node`` is made from through ``sqrt(· + eps)``, ``rsqrt``, ``** 0.5`` and names."""
    if any(node is p for p in pending):
        return node
    if depth > 8:
        return None
    was = node.info.get("was")
    if was is not None:
        return _statistic(was, pending, depth + 1)
    if node.op not in _CARRY:
        return None
    arrays = [c for c in node.children if c.shape]
    return _statistic(arrays[0], pending, depth + 1) if len(arrays) == 1 else None


def normalisations(ck: Checker, root: Node) -> None:
    """Each ``x - stat`` / ``x / stat`` / ``x * stat`` in the tree whose statistic is over the sequence or batch."""
    found: list[tuple[Node, Node]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.op not in ("sub", "div", "mul") or len(node.children) != 2:
            continue
        for side, other in ((node.children[1], node.children[0]), (node.children[0], node.children[1])):
            stat = _statistic(side, ck.pending) if side.shape else None
            if stat is None or not stat.children:
                continue
            base = stat.children[0]
            while base.op in ("pow", "square") and base.children:  # x.pow(2).mean(…) for RMSNorm
                base = base.children[0]
            if base.shape == other.shape and base.names == other.names and all(stat is not f for f, _ in found):
                found.append((stat, base))
    for stat, base in sorted(found, key=lambda f: (f[0].info.get("line", 0), f[0].start)):
        _normalised_over(ck, stat, base)


def _normalised_over(ck: Checker, stat: Node, base: Node) -> None:
    fname, shape, axis, _ = stat.info["reduce"]
    n = len(shape)
    gone = range(n) if axis is None else sorted({a % n for a in (axis if isinstance(axis, tuple) else (axis,))})
    roles = [role(a) for a in base.names]
    bad = [i for i in gone if roles[i] in ("seq", "key", "batch")]
    feature = next((i for i in range(n - 1, -1, -1) if roles[i] in ("feature", "head_dim") and i not in gone), None)
    if not bad or feature is None or any(roles[i] is None for i in gone):
        return
    new = _with_axis(stat.text, fname, feature - n, ck.torch)
    fix = (stat.start, stat.end, new) if new else None
    over = ", ".join(f"{fmt_ax(base.names[i])} ({word(roles[i])})" for i in gone)
    warn(ck, f"{stat.text} takes the {fname} of {parenthesized(base)} {fmt_names(base.names)} over {over} to normalise it, but "
            f"LayerNorm and RMSNorm normalise each position over its features, {fmt_ax(base.names[feature])} "
            f"(axis {feature - n})" + (f"; write {new}" if new else ""), stat.start, stat.end, [base], fix, at=stat)


def _with_axis(text: str, fname: str, axis: int, torch: bool) -> str | None:
    """The reduction call ``text`` rewritten over ``axis`` with the reduced axis kept."""
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Attribute, ast.Name)):
        return None
    method = isinstance(call.func, ast.Attribute) and call.func.attr == fname and not (
        isinstance(call.func.value, ast.Name) and call.func.value.id in ("np", "numpy", "torch"))
    pos = 0 if method else 1
    keys = ("dim", "axis")
    torchy = torch or any(kw.arg in ("dim", "keepdim") for kw in call.keywords)
    found = False
    for kw in call.keywords:
        if kw.arg in keys:
            kw.value, found = ast.Constant(axis), True
    if not found:
        if len(call.args) > pos:
            call.args[pos] = ast.Constant(axis)
        else:
            call.keywords.append(ast.keyword(arg="dim" if torchy else "axis", value=ast.Constant(axis)))
    keep = "keepdim" if torchy else "keepdims"
    call.keywords = [kw for kw in call.keywords if kw.arg not in ("keepdim", "keepdims")]
    call.keywords.append(ast.keyword(arg=keep, value=ast.Constant(True)))
    return ast.unparse(call)


def layer_norm_axes(ck: Checker, node: Node, x: Node, count: int, span: Span) -> None:
    """``F.layer_norm`` over trailing axes that hold positions or the batch, where a feature axis exists."""
    n = len(x.shape)
    roles = [role(a) for a in x.names]
    over = list(range(n - count, n))
    feature = next((i for i in range(n - 1, -1, -1) if roles[i] in ("feature", "head_dim")), None)
    if feature is None or feature in over or not any(roles[i] in ("seq", "key", "batch") for i in over):
        return
    warn(ck, f"F.layer_norm normalises the last {count} axis(es) of {fmt_names(x.names)}, "
            f"{', '.join(f'{fmt_ax(x.names[i])} ({word(roles[i])})' for i in over)}: a LayerNorm normalises each "
            f"position over its features, {fmt_ax(x.names[feature])}; move it last first", span[0], span[1], [x])


# --- masks and scales --------------------------------------------------------------------------------------------

def mask_after_softmax(ck: Checker, soft_side: Node, span: Span, masked: Node | None = None) -> None:
    """A mask (masked_fill, where, + mask) applied to what a softmax made."""
    soft = origin(soft_side)
    fix = None
    if masked is not None and written_here(ck, soft) and masked.text.startswith(soft.text) and soft.children:
        inner = soft.children[0]
        tail = masked.text[len(soft.text):]
        new = soft.text[: inner.start - soft.start] + parenthesized(inner) + tail + soft.text[inner.end - soft.start:]
        fix = (masked.start, masked.end, new)
    earlier = "line" in soft.info and soft.info.get("src") != ck.src
    where = f" (line {soft.info['line']})" if earlier else ""
    swap = earlier and masked is not None and soft.children and soft_side.op == "name" and \
        soft.children[0].text == soft_side.text and soft_side.info.get("was") is soft
    advice = warn(ck, f"the mask is applied after the softmax: {soft_side.text}{where} already sums to 1 over the "
                     "keys; masking it afterwards leaves rows that do not sum to 1 (and -inf becomes nan in the "
                     "weighted sum): mask the scores, then take the softmax" + (f": {fix[2]}" if fix else "") +
                     (f"; swap line {soft.info['line']} and this line" if swap else ""), span[0], span[1],
                     [soft_side], fix)
    if advice is not None and swap and masked is not None:
        line = soft.info["line"]
        advice.edits += [(line, soft.text, masked.text), (-1, masked.text, soft.text)]  # -1: the line warned at


def scale(ck: Checker, scores: Node, by: Node, made: Node, under: Ax) -> None:
    """``scores / sqrt(X)`` where the scores' dot products sum over another axis than X."""
    summed = made.info["contracted"]
    got, want = role(under), role(summed)
    size = made.children[0].shape[-1] if made.children and made.children[0].shape else None
    under_size = ck.sizes.get(under[0]) if under is not None and len(under) == 1 else None
    if got is None or (got == want and under_size in (None, size)):
        return
    target = _claimed(by, under)
    new = None
    if target is not None and written_here(ck, target):
        if target.op != "size" and summed is not None and len(summed) == 1 and summed[0] in ck.b.dims:
            new = summed[0]
        elif made.children:
            new = f"{parenthesized(made.children[0])}.{'size(-1)' if ck.torch else 'shape[-1]'}"
    fix = (target.start, target.end, new) if new and target is not None else None
    warn(ck, f"the scores {made.text} are dot products over {fmt_ax(summed)} ({size}), so they are scaled by "
            f"1/√{fmt_ax(summed)}; this scales by √{fmt_ax(under)} ({word(got)})" +
            (f": write {new} under the square root" if new else ""), by.start, by.end, [made], fix)


def _claimed(node: Node, under: Ax) -> Node | None:
    """The node inside a scale that names ``under`` (the size under the square root)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.info.get("claim") == under and n.shape == ():
            return n
        stack.extend(n.children)
    return None
