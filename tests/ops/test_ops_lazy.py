"""Op kinds load lazily (issue 38, start-up): ``import explain.ops`` imports no op kind's module, ``get(kind)``
imports the module :data:`explain.ops.kinds.KINDS_OF` names for it, ``explain.ops.REGISTRY`` is every kind.
The table is held to what the modules register, so a new kind that is not in it fails here. On the code before
this test, importing explain.ops imported all 23 op modules (and there was no table)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from explain import ops
from explain.ops.kinds import KINDS_OF, MODULE_OF

OPS = Path(ops.__file__).parent


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return {m.rsplit(".", 1)[1] for m in out.split() if m.startswith("explain.ops.")}


def test_the_table_names_every_kind_each_module_registers() -> None:
    registered: dict[str, set[str]] = {}
    for kind, op in ops.REGISTRY.items():
        if not kind.endswith(".grad"):
            registered.setdefault(type(op).__module__.rsplit(".", 1)[1], set()).add(kind)
    assert registered == {module: set(kinds) for module, kinds in KINDS_OF.items()}
    with_register = {p.stem for p in OPS.glob("*.py") if re.search(r"^@register", p.read_text(), re.M)}
    assert with_register == set(KINDS_OF)  # a module of op kinds missing from the table would never load
    assert len(MODULE_OF) == sum(len(kinds) for kinds in KINDS_OF.values())  # no kind in two modules


def test_importing_the_package_loads_no_op_kind() -> None:
    assert _modules_after("import explain.ops") <= {"base", "numbers", "kinds"}


def test_a_kind_loads_its_own_module_and_a_backward_the_grad_module() -> None:
    loaded = _modules_after("import explain.ops as ops; ops.get('softmax'); ops.get('softmax.grad')")
    assert {"normalize", "grad"} <= loaded
    assert not {"tiled", "sampling", "experts", "routing", "tokens", "interp"} & loaded


def test_the_registry_is_every_kind_with_its_backwards() -> None:
    kinds = set(ops.REGISTRY)
    assert set(MODULE_OF) <= kinds
    assert {"matmul.grad", "softmax.grad", "layer_norm.grad"} <= kinds
    assert ops.get("matmul") is ops.REGISTRY["matmul"]  # one instance per kind, however it was reached
