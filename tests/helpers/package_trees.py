"""Every module of the package parsed once per test process, for the house scanners that walk them all
(tests/house/test_tokenizer_probes.py, tests/house/test_model_lookups.py): each full parse costs about a second."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import explain

PACKAGE = Path(explain.__file__).parent


@functools.cache
def package_trees() -> dict[Path, ast.Module]:
    """Each module's path (sorted) and its syntax tree."""
    return {path: ast.parse(path.read_text()) for path in sorted(PACKAGE.rglob("*.py"))}
