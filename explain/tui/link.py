"""The link to what is on screen (key U): in a tutorial, its stop (kept while the student wanders); else the
run's model, text, step and cell. Served (``explain serve``), it is the server's address with its token; in a terminal, the
query that ``explain run LINK`` opens."""

from __future__ import annotations

import os
from typing import Any

from explain.core.registry import MODELS
from explain.serve.links import Link, parse_link

SERVE_URL = "EXPLAIN_SERVE_URL"  # set by explain serve in each visitor's environment


def screen_link(screen: Any) -> Link:
    """The link of the step screen's tour or view (a part the link cannot carry is left out)."""
    tour = screen.tour
    if tour is not None:  # a tutorial's run (given embeddings, its options) is the tutorial's: its stop
        link = Link(tutorial=tour.tutorial.name, stop=tour.stop + 1)
        try:
            return parse_link(link.query())  # a tutorial of the student's own file has no link: its run's instead
        except Exception:
            pass
    view = screen.view
    model = view.trace.config.model
    if model not in MODELS:
        return Link()
    text = screen.run_options.get("text")
    text = text if isinstance(text, str) else None
    full = (*view.lead, *view.cell)
    cell = full if len(full) == len(view.step.shape) else None
    return Link(model=model, text=text, step=view.step.name, cell=cell)


def shown_link(screen: Any) -> tuple[str, str]:
    """The link as it is shown and copied, and the line that says how to open it."""
    link = screen_link(screen)
    base = os.environ.get(SERVE_URL, "")
    if base:
        return link.url(base), "open it in another browser (copied to the clipboard)"
    url = "?" + link.query()
    return url, f"open it in a terminal with: explain run '{url}'"
