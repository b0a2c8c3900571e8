"""Tutorial errors, and the :class:`Source` that puts a file name and line number on them.

tomllib reports line numbers only for syntax errors, so :meth:`Source.line_of` finds the line of a field by
reading the text: the ``[[stops]]`` header of the n-th stop, then the first ``key =`` inside it (or inside the
named table). Every message is one line: ``FILE:LINE: where: what is wrong; how to fix it``.
"""

from __future__ import annotations

import re
from pathlib import Path

from explain.core.errors import ExplainError, UsageError

_STOP_HEADER = re.compile(r"^\s*\[\[\s*stops\s*\]\]")
_TABLE_HEADER = re.compile(r"^\s*\[")


class TutorialError(ExplainError):
    """A tutorial that cannot be read, run or checked; the message names the file, the stop and field, and
    the fix."""


class TutorialNotFound(TutorialError, UsageError):
    """A tutorial name that is neither shipped nor a file (a usage error: exit 2)."""

    exit_code = 2


def one_line(text: str) -> str:
    """Messages are one line: newlines inside quoted values or engine messages become spaces."""
    return " ".join(str(text).split())


class Source:
    """A tutorial file's name and text, for locating fields in error messages."""

    def __init__(self, path: str | Path, text: str = "") -> None:
        self.path = str(path)
        self.lines = text.splitlines()
        self.in_string = _multiline_string_lines(self.lines)
        self.stop_lines = [i + 1 for i, line in enumerate(self.lines)
                           if i not in self.in_string and _STOP_HEADER.match(line)]

    def _region(self, stop: int | None, table: str | None) -> tuple[int, int]:
        """Lines [start, end) (1-based) where a stop's or a table's keys are written."""
        n = len(self.lines) + 1
        if stop is not None:
            if stop < len(self.stop_lines):
                start = self.stop_lines[stop]
                end = self.stop_lines[stop + 1] if stop + 1 < len(self.stop_lines) else n
                return start, end
            return 1, n
        if table:
            header = re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]")
            for i, line in enumerate(self.lines):
                if i not in self.in_string and header.match(line):
                    end = next((j + 1 for j in range(i + 1, len(self.lines)) if _TABLE_HEADER.match(self.lines[j])), n)
                    return i + 1, end
        first_table = next((i + 1 for i, line in enumerate(self.lines) if _TABLE_HEADER.match(line)), n)
        return 1, first_table if not table else n

    def line_of(self, field: str | None = None, stop: int | None = None) -> int | None:
        """The line where ``field`` (``"expect.values"``, ``"options.d_model"``, ``'weights."attn.W_Q"'``) is
        written, in stop number ``stop`` (0-based) if given; the stop's header line if the field is not found;
        None when nothing can be located (an empty or unreadable file)."""
        if not self.lines:
            return None
        parts = _split_field(field) if field else []
        table = parts[0] if stop is None and len(parts) > 1 else None
        start, end = self._region(stop, table)
        if parts:
            key = parts[-1]
            pattern = re.compile(rf"(^|[\s{{,.\[])[\"']?{re.escape(key)}[\"']?\s*=")
            for i in range(start - 1, min(end, len(self.lines) + 1) - 1):
                if i in self.in_string:
                    continue  # narration text that happens to contain "key ="
                line = self.lines[i].split("#", 1)[0] if '"' not in self.lines[i] else self.lines[i]
                if pattern.search(line):
                    return i + 1
            if len(parts) > 1:  # a table such as [stops.expect]: its header
                header = re.compile(rf"^\s*\[\s*(stops\.)?{re.escape(parts[-2])}\s*\]")
                for i in range(start - 1, min(end, len(self.lines) + 1) - 1):
                    if header.match(self.lines[i]):
                        return i + 1
        if stop is not None and stop < len(self.stop_lines):
            return self.stop_lines[stop]
        if len(parts) == 1:  # a whole table, such as [options]
            header = re.compile(rf"^\s*\[\s*{re.escape(parts[0])}\s*\]")
            for i, line in enumerate(self.lines):
                if i not in self.in_string and header.match(line):
                    return i + 1
        return start if table else None

    def error(self, what: str, fix: str = "", *, field: str | None = None, stop: int | None = None,
              step: str | None = None, cls: type[TutorialError] = TutorialError) -> TutorialError:
        """A one-line error: ``FILE:LINE: stop N 'step', field: what; fix``."""
        line = self.line_of(field, stop)
        where = f"{self.path}:{line}" if line else self.path
        parts = []
        if stop is not None:
            parts.append(f"stop {stop + 1}" + (f" '{step}'" if step else ""))
        if field:
            parts.append(field)
        loc = ", ".join(parts)
        msg = f"{where}: " + (f"{loc}: " if loc else "") + one_line(what)
        if fix:
            msg += "; " + one_line(fix)
        return cls(msg)


def _split_field(field: str) -> list[str]:
    """``'weights."attn.W_Q"'`` → ["weights", "attn.W_Q"]; ``"expect.values[1]"`` → ["expect", "values"]."""
    field = re.sub(r"\[[^\]]*\]$", "", field)
    parts: list[str] = []
    for m in re.finditer(r'"([^"]*)"|([^.]+)', field):
        parts.append(m.group(1) if m.group(1) is not None else m.group(2))
    return parts


def _multiline_string_lines(lines: list[str]) -> set[int]:
    """Indices of lines inside a multi-line (triple-quoted) string: narration text, not TOML keys."""
    inside: set[int] = set()
    delim: str | None = None
    for i, line in enumerate(lines):
        if delim is not None:
            inside.add(i)
            if line.count(delim) % 2 == 1:
                delim = None
            continue
        for d in ('"""', "'''"):
            if line.count(d) % 2 == 1:
                delim = d
                break
    return inside
