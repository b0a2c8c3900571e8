"""``explain lens``, ``attribute`` and ``patch`` (one patch and a sweep) choose their answer in one place
(issue 38, commands/interp.py's four TUI/JSON/table branches become one): on a terminal each opens the TUI on its
answer, with --json each writes one document, with --plain each prints its tables."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from clitools import invoke

import explain.commands.interp as interp

PATCH = ("patch", "gpt", "--text", "the cat sat on the", "--corrupt", "the dog sat on the", "--word", "mat",
         "--vs", "lazy")
CASES = {  # the command, then where its TUI opens: the step, the screen over it, and what the trace carries
    "lens": (("lens", "gpt", "--word", "happy"), "lens.blocks.1.resid_post.probs", "lens", "lens"),
    "attribute": (("attribute", "gpt", "--word", "happy"), "attrib.total", "attribution", None),
    "patch": ((*PATCH, "--step", "blocks.0.resid_pre"), "patch.blocks.0.resid_pre", "patching", "patched"),
    "sweep": ((*PATCH, "--sweep", "resid"), "logits", "patching", "sweep"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_command_opens_the_tui_on_its_answer(case: str, monkeypatch) -> None:
    args, start, then, carried = CASES[case]
    opened: list[dict] = []
    monkeypatch.setattr(interp, "interactive", lambda: True)
    monkeypatch.setattr("explain.tui.open_trace", lambda trace, **kw: opened.append({"trace": trace, **kw}))
    out = invoke(*args)
    assert out.exit_code == 0, out.output
    [o] = opened
    assert (o["start"], o["then"]) == (start, then) and start in o["trace"]
    if carried is not None:
        assert getattr(o["trace"], carried) is not None  # the screen's data, a typed field of the trace


@pytest.mark.parametrize("case", list(CASES))
def test_each_command_writes_json_or_tables_when_asked(case: str) -> None:
    args = CASES[case][0]
    doc = invoke(*args, "--json")
    assert doc.exit_code == 0, doc.output
    assert isinstance(json.loads(doc.stdout), dict)  # stdout is the data (a note on which position was read goes to stderr)
    table = invoke(*args, "--plain")
    assert table.exit_code == 0 and table.stdout.strip() and not table.stdout.lstrip().startswith("{"), table.output


def test_the_choice_is_made_once() -> None:
    """One function asks whether to open the TUI and writes the JSON: the four commands call it."""
    tree = ast.parse(Path(interp.__file__).read_text())
    asks = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "interactive"]
    dumps = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "to_dict"]
    shows = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "_show"]
    assert (len(asks), len(dumps), len(shows)) == (1, 1, 4)
