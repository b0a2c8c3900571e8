"""What a result should be: ``--expect B,H,T,Dh`` on the command line and ``# expect: B, T, C`` in a function.

The expected shape is written like ``--shape``'s (sizes, or names given with ``--dim`` or bound in the function,
like ``B, T, C = x.size()``). A result that differs is an error that says which axis differs and the likeliest
fix: axes in another order (a transpose or permute, spelled in the line's library), an axis of size 1 kept or
dropped (keepdim, squeeze, a new axis), or the same values in other axes (a reshape). Comments are read with
:mod:`tokenize`, since :mod:`ast` drops them.
"""

from __future__ import annotations

import io
import tokenize
from itertools import permutations

from explain.check.errors import CheckShapeError
from explain.check.names import Ax, Names, fmt_ax, fmt_names
from explain.check.node import Node, origin
from explain.core.errors import UsageError
from explain.core.limits import MAX_DIGITS
from explain.core.shape_rules import Shape, fmt_shape

MAX_PERMUTED = 6  # 720 orders: instant


def parse_expect(raw: str, dims: dict[str, int], aliases: dict[str, Ax] | None = None,
                 what: str = "--expect") -> tuple[Shape, Names]:
    """``"B,H,T,Dh"`` (or ``(2, 12, 10, 64)``) into sizes and names."""
    text = raw.strip()
    # a '# expect:' comment's label already quotes it (line 12: # expect: …); --expect's is quoted here
    label, like = (f"{what} {raw.strip()!r}", "--expect B,H,T,Dh") if what == "--expect" else (what, "# expect: B, H, T, Dh")
    if not text:  # --expect "$SHAPE" with SHAPE unset: refused, not read as a 0-d result
        raise UsageError(f"{label} is empty: write the expected shape like {like}, or () for a 0-d result")
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    items = [i.strip() for i in text.split(",")]
    if items and items[-1] == "" and len(items) > 1:
        items.pop()
    if items == [""]:
        return (), ()
    sizes: list[int] = []
    names: list[Ax] = []
    for item in items:
        if item.isascii() and item.isdigit():  # '²' is a digit to str.isdigit, not to int()
            if len(item) > MAX_DIGITS:
                raise UsageError(f"{what}: a size with {len(item):,} digits; give a number below 10^{MAX_DIGITS}")
            sizes.append(int(item))
            names.append(None)
        elif item.isidentifier() and item in dims:
            sizes.append(dims[item])
            names.append((aliases or {}).get(item, (item,)))
        elif item.isidentifier():
            raise UsageError(f"{label}: {item} has no size; give it with --dim {item}=N")
        else:
            raise UsageError(f"{label}: {item!r} is neither a size nor a dimension name; write it like {like}")
    return tuple(sizes), tuple(names)


def expect_comments(source: str) -> dict[int, str]:
    """Line number → the text after ``# expect:`` on that line."""
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                body = tok.string.lstrip("#").strip()
                if body.lower().startswith("expect:"):
                    out[tok.start[0]] = body[len("expect:"):].strip()
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the file parsed with ast; a tokenizer complaint only loses the comments
    return out


def _same(a: Ax, b: Ax) -> bool:
    return a is None or b is None or a == b


def _agrees(shape: Shape, names: Names, want: Shape, want_names: Names) -> bool:
    return shape == want and all(_same(a, b) for a, b in zip(names, want_names))


def _paren(node: Node) -> str:
    return node.text if node.atomic else f"({node.text})"


def _letters(names: Names) -> list[str]:
    out = []
    for i, a in enumerate(names):
        cand = "_".join(a).replace("/", "_").lower() if a else f"a{i}"
        out.append(cand if cand.isidentifier() and cand not in out else f"a{i}")
    return out


def _permute(node: Node, perm: tuple[int, ...], torch: bool, einops: bool) -> str:
    moved = [i for i, p in enumerate(perm) if p != i]
    if einops:
        letters = _letters(node.names)
        return f'rearrange({node.text}, "{" ".join(letters)} -> {" ".join(letters[p] for p in perm)}")'
    if len(moved) == 2:
        return f"{_paren(node)}.{'transpose' if torch else 'swapaxes'}({moved[0]}, {moved[1]})"
    return f"{_paren(node)}.{'permute' if torch else 'transpose'}({', '.join(map(str, perm))})"


def mismatch(node: Node, want: Shape, want_names: Names, torch: bool, einops: bool = False) -> tuple[str, str | None]:
    """Why ``node`` is not ``want`` and the expression that would be; ("", None) when it agrees."""
    got, names = node.shape, node.names
    if _agrees(got, names, want, want_names):
        return "", None
    head = (f"the result is {fmt_shape(got)} {fmt_names(names)}".rstrip() + f", expected {fmt_shape(want)} "
            f"{fmt_names(want_names)}".rstrip())
    if len(got) == len(want) and sorted(got) == sorted(want) and len(got) <= MAX_PERMUTED:
        found = []
        for perm in permutations(range(len(got))):
            if _agrees(tuple(got[p] for p in perm), tuple(names[p] for p in perm), want, want_names):
                found.append((sum(1 for i, p in enumerate(perm) if p != i), perm))
        if found:
            perm = min(found)[1]
            moved = [i for i, p in enumerate(perm) if p != i]
            what = (f"axes {moved[0]} and {moved[1]} are swapped ({fmt_ax(names[moved[0]])} where "
                    f"{fmt_ax(want_names[moved[0]])} is expected)" if len(moved) == 2 else
                    f"the axes are in another order ({', '.join(fmt_ax(names[p]) for p in perm)} wanted)")
            fix = _permute(node, perm, torch, einops)
            return f"{head}: {what}; {fix}", fix
    if len(got) == len(want) + 1:
        for k in range(len(got)):
            if got[k] == 1 and _agrees(got[:k] + got[k + 1:], names[:k] + names[k + 1:], want, want_names):
                fix = f"{_paren(node)}.squeeze({k})" if torch else f"{_paren(node)}.squeeze({k})"
                return f"{head}: axis {k} of size 1 is extra; {fix}", fix
    if len(got) + 1 == len(want):
        for k in range(len(want)):
            if want[k] == 1 and _agrees(got, names, want[:k] + want[k + 1:], want_names[:k] + want_names[k + 1:]):
                made = origin(node)
                keep = made.info.get("keepdims_fix") if made is node else None
                if made.info.get("reduce") and keep:
                    return f"{head}: the reduction dropped axis {k}; keep it: {keep[2]}", keep[2]
                index = ", ".join([":"] * k + ["None"])
                fix = f"{_paren(node)}.unsqueeze({k})" if torch else f"{_paren(node)}[{index}]"
                return f"{head}: axis {k} of size 1 is missing; {fix}", fix
    total_got, total_want = 1, 1
    for s in got:
        total_got *= s
    for s in want:
        total_want *= s
    if total_got == total_want:
        sizes = ", ".join(fmt_ax(a) if a and len(a) == 1 else str(s) for s, a in zip(want, want_names))
        fix = f"{_paren(node)}.reshape({sizes})"
        return f"{head}: the same {total_got:,} values in other axes; if the order is right, {fix}", fix
    k = next((i for i in range(min(len(got), len(want))) if got[i] != want[i] or not _same(names[i], want_names[i])),
             min(len(got), len(want)))
    if k < min(len(got), len(want)):
        return (f"{head}: axis {k} is {fmt_ax(names[k])} ({got[k]}) where {fmt_ax(want_names[k])} ({want[k]}) is "
                "expected"), None
    return f"{head}: {len(got)} axes where {len(want)} are expected", None


def expect_node(node: Node, raw: str, dims: dict[str, int], aliases: dict[str, Ax], torch: bool, source: str,
                where: str = "--expect") -> None:
    """Raise a CheckShapeError if ``node`` is not the shape ``raw`` says; the fix replaces ``node``'s text."""
    want, want_names = parse_expect(raw, dims, aliases, where)
    einops = "rearrange(" in source or "einops." in source
    msg, fix = mismatch(node, want, want_names, torch, einops)
    if not msg:
        return
    lines = ["  " + source, "  " + " " * node.start + "^" * max(1, node.end - node.start)]
    raise CheckShapeError(f"{where}: {msg}", lines, (node.start, node.end, fix) if fix else None)
