"""Reading a ``FILE.py::function`` target: the file (parsed, never imported), the function or method, and its
arguments' shapes from ``--shape`` or jaxtyping annotations (``Float[Tensor, "batch seq d_model"]``).

Also the report's :class:`Row` and :func:`tag`, which marks the nodes a statement made with its line, so a later
line's fix can point back at the line that made an operand.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from explain.check.names import Ax
from explain.check.node import Node
from explain.check.parse import Bindings
from explain.core.errors import UsageError
from explain.core.limits import parse_whole

MAX_FILE_BYTES = 1_000_000  # a source file past this is refused before it is read: no model file is this long
JAXTYPING_DTYPES = ("Float", "Int", "Bool", "Shaped", "Num", "Real", "Integer", "Complex", "Inexact", "UInt",
                    "Float32", "Float16", "BFloat16", "Float64", "Int64", "Int32", "Key")

class Row:
    """One line of the report: where, what, and the node (or a note when the statement was skipped)."""

    __slots__ = ("line", "text", "node", "note")

    def __init__(self, line: int, text: str, node: Node | None = None, note: str = "") -> None:
        self.line, self.text, self.node, self.note = line, text, node, note


def split_target(target: str) -> tuple[Path, str]:
    path, sep, name = target.rpartition("::")
    if not sep or not path or not name:
        raise UsageError(f"{target!r} is not FILE.py::function: write it like model.py::attention")
    if not all(part.isidentifier() for part in name.split(".")) or name.count(".") > 1:
        raise UsageError(f"{name!r} is not a function name: write FILE.py::function or FILE.py::Class.method")
    return Path(path), name


def read_source(path: Path) -> str:
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    if not path.is_file():
        raise UsageError(f"{path} is not a file: give a Python source file, like model.py::attention")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise UsageError(f"{path} is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}: check the function from a "
                         "smaller file")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text: give a Python source file") from None
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None


def find_function(tree: ast.Module, name: str, path: Path) -> ast.FunctionDef:
    scope: list[ast.stmt] = tree.body
    parts = name.split(".")
    if len(parts) == 2:
        cls = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == parts[0]), None)
        if cls is None:
            raise UsageError(f"{path} has no class {parts[0]} at its top level")
        scope = cls.body
    found = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == parts[-1]),
                 None)
    if found is None:
        defs = [n.name for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        near = f"; it has {', '.join(defs[:8])}" if defs else ""
        raise UsageError(f"{path} has no function {name}{near}")
    return found  # type: ignore[return-value]


def annotation_dims(ann: ast.expr | None, arg: str) -> list[str] | None:
    """The dims string of ``Float[Tensor, "b t d"]`` split into tokens; None without an annotation."""
    if ann is None:
        return None
    if isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) and len(ann.slice.elts) == 2:
        head = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
        dims = ann.slice.elts[1]
        if head in JAXTYPING_DTYPES and isinstance(dims, ast.Constant) and isinstance(dims.value, str):
            tokens = dims.value.split()
            for tok in tokens:
                bare = tok[1:] if tok.startswith("*") else tok
                if bare.isdigit():  # '²' and '١٢' are digits to str, not to int(); 5,000 digits overflow it
                    parse_whole(bare, f"argument {arg}: the jaxtyping dim")
                elif not (bare.isidentifier() or tok == "..."):
                    raise UsageError(f"argument {arg}: the jaxtyping dim {tok!r} is not supported (names, *name, "
                                     "..., and sizes are); give its shape with --shape")
            return tokens
    return None  # not a shape annotation (int, a config object): the argument is not an array


def bind_arguments(fn: ast.FunctionDef, b: Bindings) -> dict[str, tuple[tuple[int, ...], tuple[Ax, ...]]]:
    """Each array argument's shape and names: --shape first, then its annotation checked against it."""
    out: dict[str, tuple[tuple[int, ...], tuple[Ax, ...]]] = {}
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    known = {a.arg for a in args}
    for name in b.arrays:
        if name not in known:
            raise UsageError(f"--shape {name}: {fn.name}() has no argument {name}; its arguments are "
                             f"{', '.join(a.arg for a in args)}")
    for a in args:
        tokens = annotation_dims(a.annotation, a.arg)
        if a.arg in b.arrays:
            written = b.written.get(a.arg, b.arrays[a.arg])
            names = tuple((d,) if isinstance(d, str) else None for d in written)
            out[a.arg] = (b.arrays[a.arg], names)
            continue
        if tokens is None:
            continue
        if any(t.startswith("*") or t == "..." for t in tokens):
            raise UsageError(f"argument {a.arg} is annotated {' '.join(tokens)!r}, whose number of axes is open: "
                             f"give its shape with --shape {a.arg}=DIMS")
        missing = [t for t in tokens if not t.isdigit() and t not in b.dims]
        if missing:
            raise UsageError(f"argument {a.arg} ({' '.join(tokens)}) needs sizes: add "
                             + " ".join(f"--dim {m}=N" for m in dict.fromkeys(missing)))
        out[a.arg] = (tuple(int(t) if t.isdigit() else b.dims[t] for t in tokens),
                      tuple(None if t.isdigit() else (t,) for t in tokens))
    return out


def tag(node: Node, line: int, src: str) -> None:
    """Mark the nodes a statement made with its line and source (a later line's fix may point back at them)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if "line" in n.info:
            continue
        n.info["line"], n.info["src"] = line, src
        stack.extend(n.children)


def parse_file(path: Path, source: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source, filename=str(path))
    except SyntaxError as err:  # a NUL byte has no line: 'm.py:None:' said nothing
        where = f"{path}:{err.lineno}" if err.lineno else f"{path}"
        line = next((i for i, ln in enumerate(source.splitlines(), 1) if "\0" in ln), None) if "\0" in source else None
        raise UsageError(f"{where}: cannot parse: {err.msg}" + (f" (line {line})" if line else "")) from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise UsageError(f"cannot parse {path}: {err}") from None
