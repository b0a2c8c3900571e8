"""No module asks a tokenizer or a checkpoint what it happens to have (issue 38): every tokenizer of a run gives
:class:`explain.checkpoints.protocol.TextTokenizer` and every checkpoint :class:`~explain.checkpoints.protocol.Checkpoint`,
so ``getattr(tokenizer, "unknown", None)``, ``hasattr(source, "tokenizer_fields")`` or
``callable(getattr(source, "bos", None))`` has nothing left to find out. On the old code: 8 probes in
interp/stream.py (fixed, unknown, vocab_labels, labels) and tokenize/family.py (tokenizer_fields, sentencepiece_json,
special_tokens, bos)."""

from __future__ import annotations

import ast
import typing

from package_trees import PACKAGE, package_trees

from explain.checkpoints.protocol import Checkpoint, TextTokenizer

# members every other kind of object has too (a tutorial's name and options, a config's model): a probe of one of
# these is not a probe of a tokenizer, so the scan leaves them out
SHARED = {"name", "options", "model", "config", "path"}
MEMBERS = (typing._get_protocol_attrs(Checkpoint) | typing._get_protocol_attrs(TextTokenizer)) - SHARED


def probes(source: str | ast.Module) -> list[str]:
    """Every ``getattr(x, "m", …)`` / ``hasattr(x, "m")`` of ``source`` (or its tree) whose ``m`` is a member of
    the tokenizer or checkpoint protocols, as ``line: text``."""
    tree = ast.parse(source) if isinstance(source, str) else source
    return [f"{node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and node.args[1].value in MEMBERS]


def test_the_scan_finds_a_probe() -> None:
    found = probes('def f(tok, source):\n    a = getattr(tok, "unknown", None)\n'
                   '    return hasattr(source, "tokenizer_fields") and callable(getattr(source, "bos", None))\n')
    assert found == ["2: getattr(tok, 'unknown', None)", "3: hasattr(source, 'tokenizer_fields')",
                     "3: getattr(source, 'bos', None)"]
    assert probes('getattr(tutorial, "name", "?")') == []  # a member every object may have


def test_no_module_probes_a_tokenizer_or_a_checkpoint() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{hit}" for path, tree in package_trees().items()
             for hit in probes(tree)]
    assert found == []
