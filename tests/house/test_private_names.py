"""No private name crosses a module (issue 38): a name with a leading underscore is its module's own, so no module
of the package imports one from another (``from explain.checkpoints.gpt2 import _read_json``), reaches one
through a module it imported (``token_labels._byte_decoder``) or reads a private attribute another module's
objects keep (``getattr(source, "_words")``, ``rec._names``), or writes one (``rec._names |= …``: the hole that
hid interp/patching.py's write, since any store made a name the module's own). What two modules share gets a public
name in the module that owns it."""

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
    return sorted(set(found + reached_into(tree)))


def reached_into(tree: ast.Module) -> list[str]:
    """``x._name`` or ``getattr(x, "_name")`` on an object (not ``self``/``cls``, nor a module from outside the
    package) when this module defines no ``_name`` of its own: another module's private attribute read or written
    through one of its objects (``source._words``, ``rec._names |= …``). What this module defines: its functions
    and classes, its names, and the attributes it sets on ``self``/``cls`` (not on another object: before, any
    store counted, so ``rec._names |= {…}`` in interp/patching.py made ``_names`` its own and hid itself)."""
    own: set[str] = set()
    foreign: set[str] = set()  # names bound to modules outside the package (hashlib._Hash is hashlib's business)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
              and node.value.id in ("self", "cls")):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Import):
            foreign |= {a.asname or a.name.split(".")[0] for a in node.names if not a.name.startswith("explain")}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own
                and not (isinstance(node.value, ast.Name) and node.value.id in ({"self", "cls"} | foreign))):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                and _private(str(node.args[1].value)) and str(node.args[1].value) not in own
                and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"))):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
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
    reads = ("import hashlib\n"
             "def f(source, rec):\n"
             "    return getattr(source, '_words', None), rec._names, hashlib._Hash, self._own\n")
    assert sorted(crossings(reads, "explain.tokenize.family")) == [
        "3: getattr(source, '_words', None)", "3: rec._names"]
    assert crossings("class R:\n    def f(self, rec):\n        self._names = 1\n        return rec._names\n",
                     "explain.trace.recorder") == []
    # a write into another module's object is a crossing too, and does not make the name this module's own
    writes = "def f(rec, steps):\n    rec._names |= {s.name for s in steps}\n    rec._seen = 1\n    return rec._seen\n"
    assert sorted(crossings(writes, "explain.interp.patching")) == ["2: rec._names", "3: rec._seen", "4: rec._seen"]


def test_no_private_name_crosses_a_module() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{hit}" for path in sorted(PACKAGE.rglob("*.py"))
             for hit in crossings(path.read_text(), _module_name(path))]
    assert not found, "private names used outside their module (give them a public name):\n" + "\n".join(found)
