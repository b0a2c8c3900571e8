"""Parsing of ``--shape NAME=DIMS`` and ``--dim NAME=SIZE`` into :class:`Bindings`, and the input-length cap.

Every problem here is the user's to fix on the command line, so it is a one-line
:class:`~explain.core.errors.UsageError` (exit 2) that names the option as written and shows the right form.
"""

from __future__ import annotations

import ast
import keyword
import warnings
from collections.abc import Iterable, Mapping

from explain.core.errors import UsageError
from explain.core.limits import MAX_DIGITS
from explain.core.shape_rules import Shape

# Deep enough for any real formula; shallow enough that walking, rendering and JSON never hit Python's
# recursion limit.
MAX_DEPTH = 100

# Long enough for any expression a person types; short enough that parsing and rendering stay instant and a
# pasted file cannot make the parser recurse deeply.
MAX_SOURCE_CHARS = 2000


class Bindings:
    """What the command line says: arrays with their shapes, and named dimension sizes."""

    # A plain class, not a dataclass: building a dataclass costs startup time this command does not have.
    __slots__ = ("arrays", "written", "dims")

    def __init__(self, arrays: dict[str, Shape] | None = None,
                 written: dict[str, tuple[int | str, ...]] | None = None, dims: dict[str, int] | None = None) -> None:
        self.arrays: dict[str, Shape] = arrays or {}
        self.written: dict[str, tuple[int | str, ...]] = written or {}  # shapes as typed, for display
        self.dims: dict[str, int] = dims or {}

    @classmethod
    def concrete(cls, shapes: Mapping[str, tuple[int | str, ...]], dims: Mapping[str, int]) -> Bindings:
        """Bindings from shapes of sizes and dimension names (the Python API and the tests)."""
        written = {k: tuple(v) for k, v in shapes.items()}
        arrays = {k: tuple(dims[d] if isinstance(d, str) else d for d in v) for k, v in written.items()}
        return cls(arrays=arrays, written=written, dims=dict(dims))


def is_name(text: str) -> bool:
    """A usable name: a Python identifier that is not a keyword."""
    return text.isidentifier() and not keyword.iskeyword(text)


def check_length(source: str, what: str = "expression") -> str:
    """``source`` on one line and stripped, or a UsageError if it is empty or too long."""
    if len(source) > MAX_SOURCE_CHARS:
        raise UsageError(f"the {what} is {len(source)} characters; the limit is {MAX_SOURCE_CHARS}: "
                         "check a smaller piece at a time")
    # One line, so ast's column offsets index the text we print carets under.
    flat = "".join(" " if c in "\t\r\n" else c for c in source)
    if not flat.strip():
        raise UsageError(f'the {what} is empty: give one, like "Q @ K.T" or "b s d, d h -> b s h"')
    # Stripped: a leading space is an "unexpected indent" to ast, and carets are drawn under this text.
    return flat.strip()


def _split_option(opt: str, raw: str, rhs: str) -> tuple[str, str]:
    name, sep, value = raw.partition("=")
    name = name.strip()
    if not sep or not name:
        example = "Q=seq,64" if opt == "--shape" else "seq=10"
        raise UsageError(f"{opt} {raw!r} is not NAME={rhs}: write it like {opt} {example}")
    if not is_name(name):
        raise UsageError(f"{opt} {raw!r}: {name!r} is not a usable name (letters, digits and _, "
                         "not starting with a digit)")
    return name, value.strip()


def _parse_size(text: str, context: str) -> int:
    if len(context) > 60:
        context = context[:59] + "…"
    digits = text.strip().lstrip("+-")
    if len(digits) > MAX_DIGITS:  # int() would read it, but every product and message of it would not fit
        raise UsageError(f"{context}: the size has {len(digits):,} digits; give a number below 10^{MAX_DIGITS}")
    try:
        size = int(text)
    except ValueError:
        raise UsageError(f"{context}: {text!r} is not a whole number") from None
    if size <= 0:
        raise UsageError(f"{context}: sizes must be positive whole numbers, got {size}")
    return size


def parse_dims(dim_opts: Iterable[str]) -> dict[str, int]:
    """``["seq=10", "d=64"]`` -> ``{"seq": 10, "d": 64}``."""
    dims: dict[str, int] = {}
    for raw in dim_opts:
        name, value = _split_option("--dim", raw, "SIZE")
        if not value:
            raise UsageError(f"--dim {raw!r} has no size: write --dim {name}=SIZE, like --dim {name}=8")
        size = _parse_size(value, f"--dim {raw}")
        if name in dims:
            raise UsageError(f"--dim {name} is given twice ({dims[name]} and {size}): give it once")
        dims[name] = size
    return dims


def _parse_dims_list(raw: str, name: str, value: str) -> tuple[int | str, ...]:
    if not value:  # 'x=' is more likely a forgotten shape (an empty shell variable) than a 0-d array
        raise UsageError(f"--shape {raw!r} has no dimensions: write them like --shape {name}=seq,64, or "
                         f"--shape {name}=() for a 0-d array")
    if value.startswith("(") and value.endswith(")"):
        value = value[1:-1].strip()  # accept the tuple spelling, --shape Q=(10,64)
    if not value:
        return ()  # a 0-d array
    items = [item.strip() for item in value.split(",")]
    if items[-1] == "" and len(items) > 1:
        items.pop()  # "(10,)" like numpy's 1-tuple
    out: list[int | str] = []
    for i, item in enumerate(items):
        where = f"--shape {raw}"
        if not item:
            raise UsageError(f"{where}: dimension {i + 1} is empty; write sizes or names separated by "
                             f"commas, like --shape {name}=seq,64")
        if item.lstrip("+-").isdigit():
            out.append(_parse_size(item, where))
        elif is_name(item):
            out.append(item)
        else:
            raise UsageError(f"{where}: {item!r} is neither a size nor a dimension name")
    return tuple(out)


def parse_options(shape_opts: Iterable[str], dim_opts: Iterable[str]) -> Bindings:
    """Parse the command line's ``--shape`` and ``--dim`` options and resolve named dimensions."""
    dims = parse_dims(dim_opts)
    written: dict[str, tuple[int | str, ...]] = {}
    for raw in shape_opts:
        name, value = _split_option("--shape", raw, "DIMS")
        if name in written:
            raise UsageError(f"--shape {name} is given twice: give each array's shape once")
        written[name] = _parse_dims_list(raw, name, value)
        if name in dims:  # EXPR would read it as the array, and the size would be dropped without a word
            raise UsageError(f"{name} is given as an array (--shape {name}=…) and as a size (--dim {name}=…); a "
                             "name in EXPR is one or the other: rename one")
    missing: list[str] = []
    for shape in written.values():
        missing += [d for d in shape if isinstance(d, str) and d not in dims and d not in missing]
    if missing:
        fix = " ".join(f"--dim {m}=N" for m in missing)
        noun = "dimension" if len(missing) == 1 else "dimensions"
        raise UsageError(f"{noun} {', '.join(missing)} used in --shape {'has' if len(missing) == 1 else 'have'} "
                         f"no size: add {fix}")
    arrays = {k: tuple(dims[d] if isinstance(d, str) else d for d in v) for k, v in written.items()}
    return Bindings(arrays=arrays, written=written, dims=dims)


def _depth(tree: ast.AST) -> int:
    """The nesting depth of ``tree``, without recursion (the tree is what may be too deep)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _longest_chain(tree: ast.AST) -> int:
    """The most binary operators in one left-nested chain (``a + b + c`` is two), without recursion."""
    longest = 0
    for node in ast.walk(tree):
        n = 0
        while isinstance(node, ast.BinOp):
            n, node = n + 1, node.left
        longest = max(longest, n)
    return longest


def nesting(tree: ast.AST) -> int:
    """How deep ``tree`` nests (the checker walks it recursively)."""
    return _depth(tree)


def parse_expression(source: str) -> ast.Expression:
    """``source`` parsed with :mod:`ast` (never evaluated), or a one-line UsageError: a syntax error, or nesting
    past :data:`MAX_DEPTH`."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences in a string: we report our own errors
            tree = ast.parse(source, mode="eval")
    except SyntaxError as err:
        where = f" at column {err.offset}" if err.offset else ""
        raise UsageError(f"cannot parse the expression: {err.msg}{where}; check its parentheses and "
                         "operators") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise UsageError(f"cannot parse the expression: {err}") from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        terms = _longest_chain(tree) + 1
        if terms >= depth - 2:  # a flat a + b + … is a left-nested chain to ast, not nesting the user wrote
            raise UsageError(f"the expression chains {terms:,} terms with binary operators; explain checks at "
                             f"most {MAX_DEPTH}: check it in pieces")
        raise UsageError(f"the expression nests {depth:,} levels deep; the limit is {MAX_DEPTH}: check it in pieces")
    return tree
