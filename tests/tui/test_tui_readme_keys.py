"""Issue 42 item 10 (part): the README's key paragraph ("In the TUI: …") names every key of the key table, so a
new key (M, D were missing) cannot ship unmentioned. It fails on the old README (d u a y A P W E w t . , i T o
H J K L M U D Home End + - were not in it)."""

from __future__ import annotations

import re
from pathlib import Path

from explain.tui import keys

README = Path(__file__).resolve().parents[2] / "README.md"


def _paragraph() -> str:
    text = README.read_text()
    start = text.index("In the TUI:")
    return text[start:text.index("\n\n", start)]


def _named(token: str, spans: list[str]) -> bool:
    # `hjkl` names h, j, k and l at once; any other span names one key
    return any(token == s or (len(token) == 1 and len(s) > 1 and s.isalpha() and token in s) for s in spans)


def test_the_readme_names_every_key() -> None:
    spans = re.findall(r"`([^`]+)`", _paragraph())
    missing = [k.shown_keys for k in keys.KEYS if not any(_named(t, spans) for t in k.shown_keys.split())]
    assert missing == [], f"the README's key paragraph ('In the TUI:') does not name {missing}: add them"
