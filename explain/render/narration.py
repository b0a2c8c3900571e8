"""A tutorial's narration as Markdown that drops nothing: a token written as ``<bos>`` or ``*<eos>*`` outside
backticks is inline HTML to a Markdown parser, and rich's renderer draws no HTML, so "the top word is now
*<bos>*" printed "the top word is now , with only 0.34". :func:`keep_tokens` escapes every ``<`` outside code,
so the token is drawn as written; :func:`dropped` says which words of a narration its rendering loses, which
``explain tutorial check`` refuses."""

from __future__ import annotations

import io
import re

from rich.console import Console
from rich.markdown import Markdown

_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)  # fenced blocks and code spans keep their text as written
_WORD = re.compile(r"<[^<>\s]+>|[^\W_]+")  # a <token>, or a run of letters and digits
# what Markdown means not to draw as text: a link's or an image's target, a reference definition, an entity
_UNDRAWN = re.compile(r"\]\([^)]*\)|^\s*\[[^\]]+\]:.*$|\]\[[^\]]*\]|&#?\w+;", re.M)


def keep_tokens(text: str) -> str:
    """``text`` with each ``<`` outside code escaped (``\\<``), so ``<bos>`` is drawn, not taken for HTML."""
    parts = _CODE.split(text)
    return "".join(p if i % 2 else p.replace("\\<", "<").replace("<", "\\<") for i, p in enumerate(parts))


def narration_markdown(text: str) -> Markdown:
    """The narration as rich Markdown, every ``<token>`` kept."""
    return Markdown(keep_tokens(text))


def rendered(text: str, width: int = 100) -> str:
    """What the narration draws, as plain text."""
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(narration_markdown(text))
    return console.file.getvalue()


def dropped(text: str, width: int = 100) -> list[str]:
    """The words and ``<tokens>`` of ``text`` that its rendering does not show (in order, each once); a link's
    target and an entity's name are not text to show."""
    shown = rendered(text, width)
    words = " ".join(shown.split())
    out: list[str] = []
    for w in _WORD.findall(_UNDRAWN.sub(" ", text)):
        if w not in words and w not in out:
            out.append(w)
    return out
