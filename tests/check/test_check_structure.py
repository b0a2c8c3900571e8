"""check/'s structure (issue 38, check/ item (a)): its modules import each other without a cycle, and no function
in it is over 50 lines.

Both are measured with :mod:`ast` on the source, never by importing: every import counts, at the top of a module
or inside a function (``# lazy:``), since a lazy import that runs upward is still a cycle, only a later one. Imports
under ``if TYPE_CHECKING:`` are left out: they never run, and annotating a handler with the Checker it is given
is what a handler table needs.
"""

from __future__ import annotations

import ast
from pathlib import Path

CHECK = Path(__file__).resolve().parents[2] / "explain" / "check"
MAX_FUNCTION_LINES = 50


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for n in ast.walk(node))
    return out


def _imported(node: ast.AST, modules: set[str]) -> set[str]:
    """The check/ modules one import statement loads (``from explain.check import hints`` loads hints)."""
    if isinstance(node, ast.Import):
        return {a.name.split(".")[2] for a in node.names if a.name.startswith("explain.check.")} & modules
    if not isinstance(node, ast.ImportFrom) or node.module is None:
        return set()
    parts = node.module.split(".")
    if parts[:2] != ["explain", "check"]:
        return set()
    return ({parts[2]} if len(parts) > 2 else {a.name for a in node.names}) & modules


def import_graph() -> dict[str, set[str]]:
    """check/'s modules -> the check/ modules each imports when it runs (__init__ is the package itself)."""
    modules = {p.stem for p in CHECK.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name in sorted(modules):
        tree = ast.parse((CHECK / f"{name}.py").read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        graph[name] = {m for node in ast.walk(tree) if id(node) not in skip
                       for m in _imported(node, modules)} - {name, "__init__"}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle in ``graph`` as a path that returns to its start, or None (a depth-first search, no recursion)."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path, on_path, stack = [start], {start}, [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:  # every successor of path[-1] explored: it is on no cycle through here
                finished = path.pop()
                done.add(finished)
                on_path.discard(finished)
                stack.pop()
            elif nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    graph = import_graph()
    assert "torchops" in graph["calls"]  # `from explain.check.torchops import torch_function  # lazy: …`
    assert "expr" not in graph["calls"]  # only under TYPE_CHECKING
    assert "body" in graph["function"] and "modulecalls" in graph["function"]


def test_check_imports_no_cycle() -> None:
    """Was an 8-module cycle (expr → calls → modulecalls → function → expr, with methods, torchops, classes,
    flow) and a 3-module one (args → values → shaping → args)."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "check/ modules import each other in a circle: " + " → ".join(cycle or [])


def _functions() -> list[tuple[str, int]]:
    out = []
    for path in sorted(CHECK.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((f"{path.name}::{node.name} (line {node.lineno})", node.end_lineno - node.lineno + 1))
    return out


def test_the_length_measure_counts_a_functions_lines() -> None:
    node = ast.parse("def f():\n    a = 1\n\n    return a\n").body[0]
    assert node.end_lineno - node.lineno + 1 == 4


def test_no_function_in_check_is_over_50_lines() -> None:
    """Were 10, of 60 to 113 lines (torch_function, visit_method, visit_subscript, apply_pattern, …)."""
    functions = _functions()
    assert len(functions) > 100  # the measure found check/'s functions
    long = [f"{where}: {n} lines" for where, n in functions if n > MAX_FUNCTION_LINES]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines in explain/check/: " + "; ".join(long)


def test_the_handler_tables_cover_what_supported_lists() -> None:
    """supported.py lists the names for the messages and --help; the tables dispatch them: every listed name
    has a handler (a torch. function not in torchops.TORCH is a method called as a function), and no handler
    is for a name the messages would call unsupported."""
    from explain.check import calls, methods, supported, torchops

    assert set(methods.METHODS) == set(supported.METHODS)
    assert set(calls.NUMPY) | {"einsum"} == set(supported.FUNCTIONS)  # einsum goes to einops_ops' letters rule
    listed = set(supported.TORCH_FUNCTIONS) | set(supported.F_FUNCTIONS)
    assert set(torchops.TORCH) <= listed
    assert not [f for f in listed if f not in torchops.TORCH and f not in methods.METHODS]
    assert set(calls.LIBRARIES) == {*supported.NP_NAMES, *supported.TORCH_NAMES, *supported.F_NAMES,
                                    *supported.EINOPS_NAMES}
