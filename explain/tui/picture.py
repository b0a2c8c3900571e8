"""Pictures of the screen: ``c`` on every screen (the step view, the heads grid, the lens, the model map, attribution,
patching, live sampling, …) and the command palette's "Screenshot" all come here, to :func:`save_picture`: the
screen as it is now, as an SVG (taken before the file-name dialog opens, so the dialog is not in it), a suggested
name that says what the screen shows (:class:`Pictured`: ``lens-gpt-happy.svg``; the next free one,
``lens-gpt-happy-2.svg``, when that file is there), the export dialog's checks, a question before replacing a file,
and an atomic write. Served without a folder to write in, the picture is a download.

Each screen binds ``c`` with :data:`BINDING`, the key table's own row (``app.picture``, :meth:`ExplainApp.action_picture`):
a modal screen cuts the app's bindings off, so the app cannot bind it once for all."""

from __future__ import annotations

import io
import os
import re
import unicodedata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from textual.binding import Binding

from explain.core.errors import ExplainError
from explain.core.served import served
from explain.io.atomic import write_bytes
from explain.tui import keys
from explain.tui.export import allowed_folder, ask_path

ACTION = "app.picture"
BINDING: Binding = next(b for b in keys.bindings() if b.action == ACTION)  # the key table's row: c, its label, help
SUFFIX = ".svg"
MAX_STEM = 80  # characters of a suggested name: words of a long text would make a name no one types
MAX_TRIES = 999  # lens-gpt-happy-2 … -999, then the plain name again (the dialog asks before replacing it)


@runtime_checkable
class Pictured(Protocol):
    """A screen that says what it shows, for its picture's file name and title: ``lens gpt happy`` (words with
    spaces; a step's dotted name as it is)."""

    def picture_name(self) -> str: ...


def stem(name: str) -> str:
    """The file name for ``name``: spaces become ``-``, dots ``_`` (``blocks.0.attn.scores`` →
    ``blocks_0_attn_scores``, as before), anything else that is not a letter, a digit, ``-`` or ``_`` is dropped
    (``<bos>`` → ``bos``, ``␣cat`` → ``cat``), so it is one word in a shell and on every file system. A word of
    punctuation alone is spelled out (``.`` → ``full-stop``): the trained GPT's top word is often one."""
    words = []
    for word in name.split():
        if not re.search(r"\w", word):
            word = "-".join(unicodedata.name(c, "symbol").lower() for c in word[:3])
        words.append(re.sub(r"[^\w\-]", "", re.sub(r"\s+", "-", word.replace(".", "_"))))
    out = re.sub(r"_{2,}", "_", re.sub(r"-{2,}", "-", "-".join(words))).strip("-_")[:MAX_STEM].rstrip("-_")
    return out or "explain"


def name_of(screen: Any) -> str:
    """What ``screen`` shows, in words: its own :meth:`Pictured.picture_name`, else its kind (``help``)."""
    if isinstance(screen, Pictured):
        return screen.picture_name()
    kind = type(screen).__name__.removesuffix("Screen")
    return f"explain {re.sub(r'(?<!^)(?=[A-Z])', ' ', kind).lower() or 'screen'}"


def free_name(name: str, folder: Path | None = None) -> str:
    """``name``'s file (``stem(name).svg``) or, when that is taken in ``folder`` (the working directory), the
    first free ``-2``, ``-3``, …: a teacher's second picture of the lens is not a question about the first."""
    where = folder or Path.cwd()
    base = stem(name)
    for n in range(1, MAX_TRIES + 1):
        candidate = f"{base}{SUFFIX}" if n == 1 else f"{base}-{n}{SUFFIX}"
        if not os.path.lexists(where / candidate):
            return candidate
    return f"{base}{SUFFIX}"


def write_picture(svg: str, path: Path, overwrite: bool = False) -> Path:
    """Write an SVG screenshot to ``path`` atomically (replacing a file only with ``overwrite``) and return
    where it went."""
    return write_bytes(path, svg.encode("utf-8"), force=overwrite)


def save_picture(screen: Any) -> None:
    """``c`` on ``screen`` (the app's screen now): its picture, named after what it shows, offered as a file."""
    app = screen.app
    name = name_of(screen)
    svg = app.export_screenshot(title=f"explain: {name}")
    if served() and allowed_folder() is None:  # a visitor writes no file on the server: a download
        app.deliver_text(io.StringIO(svg), save_filename=f"{stem(name)}{SUFFIX}", mime_type="image/svg+xml")
        app.notify("picture offered as a download", timeout=4)
        return

    def write(path: Path, overwrite: bool) -> None:
        try:
            written = write_picture(svg, path, overwrite)
        except (ExplainError, OSError) as exc:
            app.notify(f"picture not saved: {exc}", severity="error", timeout=8, markup=False)
            return
        app.notify(f"wrote {written.resolve()}", title="picture saved", timeout=8, markup=False)

    ask_path(screen, "Save the screen as an SVG picture", free_name(name, allowed_folder()), SUFFIX, write,
             opener="c")
