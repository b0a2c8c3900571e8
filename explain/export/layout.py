"""Line layout for generated code: wrap a long ``name = expression`` statement the way black would (split at
the top-level operators, then a call's arguments one per line), and wrap comments, so that every line the
exporter writes fits :data:`~explain.export.values.WIDTH` columns.

Expressions come from the ops' ``source()``; they are split on their tokens, never rewritten.
"""

from __future__ import annotations

import io
import re
import textwrap
import tokenize

from explain.export.values import INDENT, WIDTH

_BINARY = {"+", "-", "*", "/", "//", "%", "@", "**"}
_SUMS = frozenset({"+", "-"})
_PRODUCTS = frozenset({"*", "/", "//", "%", "@"})
_OPEN, _CLOSE = "([{", ")]}"


def _tokens(expr: str) -> list[tokenize.TokenInfo]:
    skip = {tokenize.ENCODING, tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT,
            tokenize.DEDENT}
    return [t for t in tokenize.generate_tokens(io.StringIO(expr).readline) if t.type not in skip]


def _split_operators(expr: str, ops: frozenset[str]) -> list[str]:
    """``a @ b + c[:, None]`` → ["a @ b", "+ c[:, None]"]: cut before each top-level binary operator in
    ``ops``. Inside the parentheses the statement adds, line breaks are only whitespace, so any cut is
    correct; cutting at the lowest-precedence operators present is what makes it readable."""
    depth, cuts, prev = 0, [], None
    for t in _tokens(expr):
        if t.type == tokenize.OP and t.string in _OPEN:
            depth += 1
        elif t.type == tokenize.OP and t.string in _CLOSE:
            depth -= 1
        elif (depth == 0 and t.type == tokenize.OP and t.string in ops and prev is not None
              and not (prev.type == tokenize.OP and (prev.string in _BINARY or prev.string in _OPEN
                                                     or prev.string in (",", "=")))):
            cuts.append(t.start[1])  # a binary operator (a unary minus follows an operator or starts)
        prev = t
    pieces, start = [], 0
    for c in cuts:
        pieces.append(expr[start:c].strip())
        start = c
    pieces.append(expr[start:].strip())
    return pieces


def _split_call(expr: str) -> tuple[str, list[str], str] | None:
    """``f(a, g(b), c)[0]`` → ("f(", ["a", "g(b)", "c"], ")[0]"), and ``w[ids]`` → ("w[", ["ids"], "]"): the
    first bracket after a name, its items and what follows; None if ``expr`` is not of that form."""
    depth, open_at, close_at, commas = 0, None, None, []
    for t in _tokens(expr):
        if t.type == tokenize.OP and t.string in _OPEN:
            if depth == 0 and open_at is None:
                open_at = t.start[1]
            depth += 1
        elif t.type == tokenize.OP and t.string in _CLOSE:
            depth -= 1
            if depth == 0 and close_at is None:
                close_at = t.start[1]
        elif depth == 1 and close_at is None and t.type == tokenize.OP and t.string == ",":
            commas.append(t.start[1])
    if open_at is None or close_at is None or not re.fullmatch(r"[\w.]+", expr[:open_at]):
        return None
    tail = expr[close_at:]
    if not re.fullmatch(r"[)\]](\[[^\n]*\])?", tail):  # the close, then at most a subscript
        return None
    bounds = [open_at + 1, *[c + 1 for c in commas]]
    args = [expr[b:e].strip() for b, e in zip(bounds, [*commas, close_at])]
    return expr[: open_at + 1], [a for a in args if a], tail


def _args_lines(head: str, args: list[str], tail: str, indent: str, width: int) -> list[str]:
    """``head`` on its line, each argument on its own line one level in, ``tail``. A call's arguments all
    end with a comma; a subscript's last one must not (``w[ids,]`` would index with a tuple)."""
    lines = [head]
    for i, a in enumerate(args):
        sub = _fit(a, indent + INDENT, width)
        if head.endswith("(") or i < len(args) - 1:
            sub[-1] += ","
        lines.extend(sub)
    lines.append(indent + tail)
    return lines


def _fit(expr: str, indent: str, width: int) -> list[str]:
    """``expr`` (inside the statement's parentheses, so any break is only whitespace) as lines at ``indent``:
    as is if it fits, else split at its top-level products, else a call's arguments one per line."""
    if len(indent) + len(expr) <= width:
        return [indent + expr]
    op, body = "", expr
    first = expr.split(" ", 1)
    if len(first) == 2 and first[0] in _BINARY:  # a piece of a split: "+ b[:, None]"
        op, body = first[0] + " ", first[1]
    parts = _split_operators(body, _PRODUCTS)
    if len(parts) > 1:
        return [ln for i, p in enumerate(parts) for ln in _fit((op if i == 0 else "") + p, indent, width)]
    call = _split_call(body)
    if call is None:
        return [indent + expr]  # nothing safe to split; a very long name is left as it is
    head, args, tail = call
    return _args_lines(indent + op + head, args, tail, indent, width)


def statement(target: str, expr: str, width: int = WIDTH) -> list[str]:
    """``target = expr`` as one line, or over several lines if too long: split at the top-level + and −
    inside parentheses, or a call's arguments one per line."""
    one = f"{target} = {expr}"
    if len(one) <= width:
        return [one]
    pieces = _split_operators(expr, _SUMS)
    if len(pieces) == 1:
        pieces = _split_operators(expr, _PRODUCTS)
    if len(pieces) > 1:
        return [f"{target} = (", *[ln for p in pieces for ln in _fit(p, INDENT, width)], ")"]
    call = _split_call(expr)
    if call is None:
        return [one]
    head, args, tail = call
    return _args_lines(f"{target} = {head}", args, tail, "", width)


def comment(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    """``text`` as ``# `` comment lines no wider than ``width``; blank lines kept as a bare ``#``."""
    out: list[str] = []
    for para in text.splitlines() or [""]:
        if not para.strip():
            out.append(indent + "#")
            continue
        lead = len(para) - len(para.lstrip())
        out.extend(textwrap.wrap(para.strip(), width,
                                 initial_indent=f"{indent}# {' ' * lead}", subsequent_indent=f"{indent}# {' ' * lead}",
                                 break_on_hyphens=False) or [f"{indent}#"])
    return out
