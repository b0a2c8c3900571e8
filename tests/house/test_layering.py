"""The package's layers are its folders: each folder's ``__init__`` says in one docstring what it holds and
which folders it may import (``It may import ``core``, ``ops`` and ``trace``.``); no module imports a folder
its own does not declare (lazy imports inside functions included); the declared graph has no cycle (so no
arrow runs up); and the imports made at module load form no cycle between modules.

The top level holds only the facade ``explain`` (``__version__``; ``explain.run`` imported on first use, which
any folder may read), ``cli`` and ``__main__``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "explain"
TOP_LEVEL = {"__init__.py", "__main__.py", "cli.py"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()
FOLDERS = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def declared(folder: str) -> set[str]:
    """The folders ``folder``'s ``__init__`` docstring says it may import."""
    doc = ast.get_docstring(ast.parse((PACKAGE / folder / "__init__.py").read_text())) or ""
    m = re.search(r"It may import (nothing of explain outside itself|[^.]*)\.", " ".join(doc.split()))
    assert m, f"explain/{folder}/__init__.py: its docstring must say which folders it may import ('It may import …')"
    return set(re.findall(r"``(\w+)``", m.group(1)))


def folder_of(module: str) -> str:
    """``explain.engine.api`` → ``engine``; a top-level module is named by itself (``cli``)."""
    return module.split(".")[1] if module != "explain" else "explain"


def imports(name: str) -> list[tuple[str, bool, int]]:
    """(imported explain module, imported at module load, line) for every import in a module."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    # At load time: statements of the module body, and those inside its top-level if/try blocks.
    top = {id(n) for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef))
           for n in ast.walk(stmt)}
    typing_only = {id(n) for stmt in tree.body
                   if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test) for n in ast.walk(stmt)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                       for a in node.names]
        else:
            continue
        for t in targets:
            if t.split(".")[0] == "explain" and t != "explain":
                out.append((t, id(node) in top, node.lineno))
    return out


def test_the_top_level_holds_only_the_facade_and_the_cli() -> None:
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert loose == TOP_LEVEL, f"new top-level modules {sorted(loose - TOP_LEVEL)}: give them a folder's room"


def test_every_folder_declares_what_it_may_import_and_the_graph_has_no_cycle() -> None:
    graph = {f: declared(f) for f in FOLDERS}
    for f, deps in graph.items():
        assert deps <= set(FOLDERS), f"{f} declares folders that do not exist: {sorted(deps - set(FOLDERS))}"
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        assert node not in path, f"the folders import each other in a circle: {' → '.join(path + [node])}"
        if node not in done:
            for nxt in graph[node]:
                visit(nxt, path + [node])
            done.add(node)

    for f in FOLDERS:
        visit(f, [])


def test_no_module_imports_a_folder_its_own_does_not_declare() -> None:
    allowed = {f: declared(f) | {f} for f in FOLDERS}
    allowed["cli"] = {"core", "commands", "cli"}
    allowed["__main__"] = {"cli"}
    bad = [f"{name}:{line} imports {target}" for name in sorted(MODULES) if name != "explain"
           for target, _, line in imports(name)
           if folder_of(target) != "explain" and folder_of(target) not in allowed[folder_of(name)]]
    assert bad == []


def test_no_import_cycle_at_load_time() -> None:
    graph = {name: sorted({t for t, top, _ in imports(name) if top and t in MODULES}) for name in MODULES}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_a_broken_command_import_is_not_hidden(monkeypatch) -> None:
    """A command whose module fails to import is a bug to see, not "No such command"."""
    from click.testing import CliRunner

    from explain import cli

    monkeypatch.setitem(cli.COMMANDS, "broken", "explain.commands.does_not_exist:broken")
    result = CliRunner().invoke(cli.main, ["broken"])
    assert isinstance(result.exception, ModuleNotFoundError)
    assert "does_not_exist" in str(result.exception)
