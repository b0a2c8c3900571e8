"""The package's layers: no module imports one from a layer above it (lazy imports inside functions
included), and the imports made at module load form no cycle.

Layers, lowest first. A module belongs to the layer of the longest prefix below that names it. The root
package ``explain`` is a facade (``__version__``, and ``explain.run`` imported on first use), so any layer
may read it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "explain"

LAYERS: list[tuple[str, ...]] = [
    ("explain.text", "explain.names", "explain.limits", "explain.errors", "explain.options", "explain.padding", "explain.kernels",
     "explain.shape_rules", "explain.export.values", "explain.check.supported", "explain.tui.keys",
     "explain.tui.messages", "explain.paths", "explain.atomic", "explain.cancel", "explain.pricing",
     "explain.tensorfile", "explain.diskfile"),  # safetensors by numpy; whole-or-absent writes; big writes past the page cache
    ("explain.registry", "explain.check", "explain.trained"),  # the model registry (names, capabilities, defaults);
    # the shape checker; where the shipped trained GPT lives
    ("explain.config", "explain.inputs", "explain.readers", "explain.array_files", "explain.token_labels",
     "explain.sampling", "explain.tokenizer_guard", "explain.folder_check"),
    ("explain.ops",),
    ("explain.trace", "explain.recorder", "explain.slices", "explain.origin"),
    ("explain.models", "explain.weights", "explain.wordlevel",
     "explain.checkpoint", "explain.hub", "explain.llama_checkpoint", "explain.gguf_checkpoint", "explain.quantized", "explain.shape_report", "explain.pick",
     "explain.models.generate", "explain.memory",
     "explain.backward", "explain.save"),  # backward: the walker over a trace
    ("explain.request", "explain.api", "explain.predict", "explain.draw", "explain.resample"),
    ("explain.interp",),  # the logit lens, attribution, patching: recorded after a run made by the api
    ("explain.train",),  # explain train: its untraced step, AdamW, the corpus, the Hugging Face folder
    ("explain.export",),
    ("explain.tutorial",),
    ("explain.render",),
    ("explain.tui",),
    ("explain.commands",),
    ("explain.cli", "explain.__main__"),
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def layer(module: str) -> int:
    best, found = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, found = len(p), i
    assert found is not None, f"{module} is in no layer: add it to LAYERS"
    return found


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


def test_every_module_has_a_layer() -> None:
    for name in MODULES:
        if name != "explain":
            layer(name)


def test_no_module_imports_from_a_layer_above() -> None:
    bad = [f"{name}:{line} imports {target}" for name in sorted(MODULES) if name != "explain"
           for target, _, line in imports(name) if layer(target) > layer(name)]
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
