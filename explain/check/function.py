"""``explain check FILE.py::function``: check a whole function or method, statement by statement, from its syntax
tree.

The file is parsed with :mod:`ast` and never imported or run (nor is torch or jaxtyping). Argument shapes
come from jaxtyping-style annotations, ``Float[Tensor, "batch seq d_model"]`` (names, ``*batch``, ``...``,
literal sizes), or ``--shape``; ``--dim`` gives the names' sizes. Each statement of the body is checked in
order (:mod:`explain.check.body`) and the names it assigns carry their shapes and axis names forward;
``B, T, C = x.shape`` binds sizes that stand for x's axes. A statement the checker cannot follow (a loop, a call
to an unknown function) is skipped with one note, and the names it assigns become unknown: a later use says so.
The first shape mismatch stops the check with the file, the line, a caret and the fix. A method's ``self.X``
comes from its class's ``__init__`` (:mod:`explain.check.classes`, :mod:`explain.check.modulecalls`).

The top of check/'s import graph: it imports the body walker and the class readers, and none of them imports it.
"""

from __future__ import annotations

import ast

from explain.check.body import FunctionCheck, run_body, utf8_lines
from explain.check.parse import MAX_DEPTH, Bindings, nesting
from explain.check.source import find_function, parse_file, read_source, split_target
from explain.core.errors import UsageError

__all__ = ["FunctionCheck", "check_function", "run_body", "utf8_lines"]


def check_function(target: str, bindings: Bindings, torch: bool | None = None) -> FunctionCheck:
    """Check ``FILE.py::function``; raises UsageError for a bad path or name, CheckShapeError at a mismatch
    (its display names the file and line)."""
    path, name = split_target(target)
    source = read_source(path)
    tree = parse_file(path, source)
    fn = find_function(tree, name, path)
    if nesting(fn) > MAX_DEPTH + 20:
        raise UsageError(f"{fn.name}() nests deeper than {MAX_DEPTH + 20} levels: check it in pieces")
    run = FunctionCheck(source, path, fn, bindings, torch)
    if "." in name:  # a method: its class's __init__ says what self.X is
        from explain.check import modulecalls  # lazy: only methods read a class and call its modules
        from explain.check.classes import ClassContext, read_init  # lazy: only methods read a class

        modulecalls.register()
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name.split(".")[0])
        run.ck.cls = ClassContext(cls, tree, source, path)
        run.label = name
        read_init(run.ck, run.ck.cls)
    run_body(run)
    return run
