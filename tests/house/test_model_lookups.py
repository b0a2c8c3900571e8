"""No module outside the registry looks a model up by its name (issue 38): a run's request carries the registry's
entry (:attr:`explain.engine.ask.Request.model`), a config gives its own (:attr:`explain.core.config.Config.spec`),
and a name a user typed becomes an entry once, through :func:`explain.core.registry.check_model_name`; so no
``MODELS[name]`` or ``MODELS.get(name)`` outside :mod:`explain.core.registry`. At the start of this session: 16
lookups in 11 modules (commands/shapes and tokenize, the TUI's re-run form, export/script, train, interp/stream,
engine/prepare and ask, checkpoints/trained, core/config, render/plain)."""

from __future__ import annotations

import ast

from package_trees import PACKAGE, package_trees

REGISTRY = PACKAGE / "core" / "registry.py"


def lookups(source: str | ast.Module) -> list[str]:
    """Every ``MODELS[…]`` and ``MODELS.get(…)`` of ``source`` (or its tree; ``registry.MODELS`` too), as
    ``line: text``."""
    def is_models(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id == "MODELS") or \
            (isinstance(node, ast.Attribute) and node.attr == "MODELS")

    found = []
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if isinstance(node, ast.Subscript) and is_models(node.value):
            found.append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and is_models(node.func.value):
            found.append(node)
    return [f"{n.lineno}: {ast.unparse(n)}" for n in found]


def test_the_scan_finds_a_lookup() -> None:
    source = "x = MODELS[name]\ny = registry.MODELS.get(cfg.model)\nz = [m for m in MODELS.values()]\n"
    assert lookups(source) == ["1: MODELS[name]", "2: registry.MODELS.get(cfg.model)"]


def test_no_module_outside_the_registry_looks_a_model_up_by_name() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{hit}" for path, tree in package_trees().items() if path != REGISTRY
             for hit in lookups(tree)]
    assert found == []
