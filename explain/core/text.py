"""Text from files made safe to print: :func:`visible`, the one function every file-borne string goes through.

A tutorial title, a narration, a TOML key, a safetensors tensor name or a tokenizer piece is written by someone
else; printed raw, ``\\x1b]2;…\\x1b\\\\`` retitles the user's terminal window and ``\\x1b[2J`` clears it. So
every string read from a file, and every error message (which quotes such strings), is passed through
:func:`visible` before it can reach a terminal: control characters become their escapes (``\\x1b``), shown
rather than obeyed. Nothing here imports anything beyond the standard library.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

# Characters that are not Cc but still steer a terminal's or a reader's view of the text: bidirectional
# overrides and isolates ("Trojan Source") and the Unicode line/paragraph separators.
_STEERING = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")


def _escape(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def _hidden(c: str, multiline: bool) -> bool:
    if c in "\n\t":
        return not multiline
    if c in _STEERING:
        return True
    return unicodedata.category(c) in ("Cc", "Cs")


def visible(text: object, *, multiline: bool = False) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\x9b``, ``\\u202e``).

    With ``multiline`` (narration, markdown), newlines and tabs are kept; otherwise (titles, names, one-line
    messages) they are escaped too, so the text stays on one line. Printable text, including any script and
    emoji, is unchanged. Plain ASCII without controls is returned as it is, cheaply.
    """
    s = str(text)
    if s.isascii() and s.isprintable():
        return s
    return "".join(_escape(c) if _hidden(c, multiline) else c for c in s)


def quoted(word: object) -> str:
    """A word in quotes as a reader wants it: ``'cat'``, ``"'s"`` (double quotes when it holds a single one), and
    a byte-token label ``\\xd1`` written once (``repr`` would double its backslash to ``'\\\\xd1'``). Control
    characters are escaped as :func:`visible` does, so the text stays safe and on one line."""
    s = visible(word)
    q = '"' if "'" in s and '"' not in s else "'"
    return f"{q}{s}{q}"


def visible_tree(data: object, *, multiline: bool = True) -> object:
    """A parsed document (dicts, lists, strings, numbers) with every string and key passed through
    :func:`visible`; keys are always made one-line."""
    if isinstance(data, str):
        return visible(data, multiline=multiline)
    if isinstance(data, dict):
        return {visible(k) if isinstance(k, str) else k: visible_tree(v, multiline=multiline)
                for k, v in data.items()}
    if isinstance(data, list):
        return [visible_tree(v, multiline=multiline) for v in data]
    return data


class RowLabels(Sequence):
    """One label per row of an axis (the vocabulary), made when asked for: the given labels, then ``#i``.

    A vocabulary of 10⁸ rows is never a list of 10⁸ strings; a display asks for the few rows it shows.
    ``given`` is a list (ids 0…) or a dict (id → label)."""

    def __init__(self, given: Sequence[str] | Mapping[int, str], n: int) -> None:
        self._given = given
        self._n = n

    def __len__(self) -> int:
        return self._n

    def _one(self, i: int) -> str:
        g = self._given
        if isinstance(g, Mapping):
            return g.get(i, f"#{i}")
        return g[i] if i < len(g) else f"#{i}"

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, slice):
            return [self._one(i) for i in range(*key.indices(self._n))]
        i = key + self._n if key < 0 else key
        if not 0 <= i < self._n:
            raise IndexError(key)
        return self._one(i)

    def __repr__(self) -> str:
        return f"RowLabels({len(self)} rows)"
