"""Links to what is on screen: ``?tutorial=18&stop=3`` or ``?model=gpt&text=the+cat+sat&step=blocks.0.attn.pattern
&cell=0,0,4,2``, read from a browser's address or given to ``explain run LINK``.

:func:`parse_link` is the one reader: a link is checked here (its length, its parts, a shipped tutorial's name and
stop count, a registered model, a step name's characters, a cell's whole numbers), then the run's own options
check the rest as they check the command line's. A link never names a file: a tutorial by path, a checkpoint or a
catalogue model is refused, and nothing in it reaches a shell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

from explain.core.errors import UsageError
from explain.core.limits import parse_whole
from explain.core.registry import MODELS

MAX_LINK = 2_048  # characters of a link: a run's text of a few sentences fits
MAX_TEXT = 500  # characters of text=
PARTS = ("tutorial", "stop", "model", "text", "step", "cell")
SERVER_PARTS = ("token", "delay", "fontsize", "ping")  # the server's own, not the app's
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,99}")
_STEP = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.]{0,199}")


class LinkError(UsageError):
    """A link explain cannot open: one line naming the part and the fix."""


@dataclass(frozen=True)
class Link:
    """What a link opens: a shipped tutorial (at a 1-based stop), or a run of a registered model on a text (at a
    step and a cell of its output); neither: the first tutorial."""

    tutorial: str | None = None
    stop: int | None = None
    model: str | None = None
    text: str | None = None
    step: str | None = None
    cell: tuple[int, ...] | None = None

    def query(self) -> str:
        """The link's query string, in :data:`PARTS` order ('' for the first tutorial)."""
        pairs = [(k, v) for k in PARTS if (v := getattr(self, k)) is not None]
        return urlencode([(k, ",".join(map(str, v)) if k == "cell" else str(v)) for k, v in pairs], safe=",")

    def url(self, base: str) -> str:
        """The link on ``base`` (a server's address, with its token), or ``explain:?…`` without one."""
        q = self.query()
        if not base:
            return f"explain:?{q}"
        return base + (("&" if "?" in base else "?") + q if q else "")


def _query(link: str) -> str:
    s = link.strip()
    if "?" in s:
        return urlsplit(s).query if "://" in s else s.split("?", 1)[1]
    return s


def _tutorial(name: str) -> tuple[str, int]:
    """A shipped tutorial's file stem and number of stops (by its name, its name without the number, or the
    number); never a path."""
    from explain.tutorial import to_fetch  # lazy: the tutorials are read only for a link
    from explain.tutorial.loader import find_shipped, load_tutorial  # lazy: the tutorials are read only for a link

    f = find_shipped(name) if _NAME.fullmatch(name) else None
    if f is None:
        raise LinkError(f"no tutorial named '{name[:60]}' for a link; list them with 'explain tutorial list'")
    tut = load_tutorial(f.name.removesuffix(".toml"))
    if to_fetch(tut):  # a catalogue model not on this machine: explain serve downloads nothing for a visitor
        raise LinkError(f"tutorial '{tut.name}' runs a model that is not on this machine; the teacher can fetch it "
                        "first ('explain models' lists them)")
    return tut.name, len(tut.stops)


def parse_link(link: str) -> Link:
    """Read a link (a whole address, or its query string with or without '?'), or one line saying what is wrong."""
    if len(link) > MAX_LINK:
        raise LinkError(f"the link is {len(link):,} characters; a link to explain is at most {MAX_LINK:,}")
    try:
        pairs = parse_qsl(_query(link), keep_blank_values=True, strict_parsing=False, max_num_fields=20)
    except ValueError:
        raise LinkError("the link has too many parts; it may hold " + ", ".join(PARTS)) from None
    got: dict[str, str] = {}
    for k, v in pairs:
        if k in SERVER_PARTS:
            continue
        if k not in PARTS:
            raise LinkError(f"unknown part '{k[:40]}' of the link; it may hold " + ", ".join(PARTS))
        if k in got:
            raise LinkError(f"the link gives {k}= twice")
        got[k] = v
    if "tutorial" in got and "model" in got:
        raise LinkError("a link opens a tutorial or a model, not both")
    for part, needs in (("stop", "tutorial"), ("text", "model"), ("step", "model"), ("cell", "step")):
        if part in got and needs not in got:
            raise LinkError(f"{part}= needs {needs}= in the link")
    if "tutorial" in got:
        name, n = _tutorial(got["tutorial"])
        stop = parse_whole(got["stop"], "stop", minimum=1) if "stop" in got else None
        if stop is not None and stop > n:
            raise LinkError(f"tutorial '{name}' has {n} stops; stop={stop} is past the end")
        return Link(tutorial=name, stop=stop)
    if "model" not in got:
        return Link()
    model = got["model"]
    if model not in MODELS:
        raise LinkError(f"no model '{model[:40]}' for a link; one of: " + ", ".join(MODELS))
    text = got.get("text")
    if text is not None:
        if len(text) > MAX_TEXT:
            raise LinkError(f"text= is {len(text):,} characters; a link's text is at most {MAX_TEXT}")
        if not text.isprintable():
            raise LinkError("text= holds a control character; give printable text")
    step = got.get("step")
    if step is not None and not _STEP.fullmatch(step):
        raise LinkError(f"step= '{step[:40]}' is not a step name (letters, digits, '_' and '.')")
    cell = None
    if "cell" in got:
        parts = got["cell"].split(",")
        if len(parts) > 8:
            raise LinkError("cell= has more than 8 indices")
        cell = tuple(parse_whole(p, "each index of cell=") for p in parts)
    return Link(model=model, text=text, step=step, cell=cell)
