"""No private name crosses a module (issue 38): a name with a leading underscore is its module's own, so no module
of the package imports one from another (``from explain.checkpoints.gpt2 import _read_json``) or reaches one
through a module it imported (``token_labels._byte_decoder``). A helper two modules share is given a public name in
the module that owns it."""

from __future__ import annotations

import ast
from pathlib import Path

import explain

PACKAGE = Path(explain.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULE_NAMES = {_module_name(p) for p in PACKAGE.rglob("*.py")}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def crossings(source: str, where: str) -> list[str]:
    """Every private name of another module of the package that ``source`` (the module ``where``) imports or
    reaches through an imported module, as ``line: text``."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # a local name bound to a module of the package -> that module
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("explain"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in MODULE_NAMES:
                    modules[alias.asname or alias.name] = full
                elif _private(alias.name) and node.module != where:
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULE_NAMES and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and modules.get(node.value.id, where) != where):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_the_scanner_finds_both_ways_a_private_name_crosses() -> None:
    source = ("from explain.checkpoints.gpt2 import _read_json, CONFIG\n"
              "from explain.checkpoints import token_labels\n"
              "import explain.checkpoints.origin as origin\n"
              "def f():\n"
              "    return token_labels._byte_decoder(), origin._x, token_labels.token_labels, self._own\n")
    assert sorted(crossings(source, "explain.engine.api")) == [
        "1: from explain.checkpoints.gpt2 import _read_json", "5: origin._x", "5: token_labels._byte_decoder"]
    assert crossings("from explain.engine.api import _labels\n", "explain.engine.api") == []


def test_no_private_name_crosses_a_module() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{hit}" for path in sorted(PACKAGE.rglob("*.py"))
             for hit in crossings(path.read_text(), _module_name(path))]
    assert not found, "private names used outside their module (give them a public name):\n" + "\n".join(found)
