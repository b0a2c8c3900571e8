"""Export from the TUI: the current step (``x``) or the whole run (``X``) as a numpy script in the working
directory, through :func:`explain.export.write_export`. Never overwrites: ``name.py`` exists → ``name-1.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explain.trace import Trace


def free_path(directory: Path, stem: str, suffix: str = ".py") -> Path:
    """``stem.py`` in ``directory``, or the first of ``stem-1.py``, ``stem-2.py``, … that does not exist."""
    path = directory / f"{stem}{suffix}"
    n = 1
    while path.exists():
        path = directory / f"{stem}-{n}{suffix}"
        n += 1
    return path


def step_stem(name: str) -> str:
    """``blocks.0.attn.scores`` → ``blocks_0_attn_scores``."""
    return name.replace(".", "_")


def export(trace: Trace, steps: list[str] | None, narration: dict[str, Any] | None = None,
           directory: Path | None = None) -> Path:
    """Write the export and return its path; ImportError when the export module is not there yet."""
    from explain.export import write_export

    stem = step_stem(steps[0]) if steps else f"{trace.config.model}_run"
    path = free_path(directory or Path.cwd(), stem)
    return write_export(trace, path, steps=steps, fmt="py", force=False, narration=narration)
