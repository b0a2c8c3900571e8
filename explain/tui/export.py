"""Export from the TUI: the current step (``x``) or the whole run (``X``) as a numpy script, through
:func:`explain.export.write_export`, and the screen as an SVG picture (``c``). The step screen asks for the
file name (prefilled with :func:`default_name` / :func:`picture_name`, in the working directory) and asks
before overwriting a file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from explain.atomic import write_bytes
from explain.errors import ExplainError
from explain.paths import check_output, expand
from explain.trace import Trace


def step_stem(name: str) -> str:
    """``blocks.0.attn.scores`` → ``blocks_0_attn_scores``."""
    return name.replace(".", "_")


def default_name(trace: Trace, steps: list[str] | None) -> str:
    """The file name offered: the step's name, or ``MODEL_run``, as a .py file."""
    return f"{step_stem(steps[0]) if steps else f'{trace.config.model}_run'}.py"


def picture_name(step: str) -> str:
    """The file name offered for a picture of the screen: the step's name, as an .svg file."""
    return f"{step_stem(step)}.svg"


def target_path(name: str, directory: Path | None = None, suffix: str = ".py") -> Path:
    """The file a typed name means: relative names are in ``directory`` (the working directory), ``~`` is
    expanded, and a new name without a suffix gets ``suffix`` (what exists is taken as it is: ``/dev/full`` is
    the device, refused, not ``/dev/full.svg``). A name no file can have is a
    :class:`~explain.errors.UsageError` (:func:`explain.paths.expand`)."""
    path = expand(name)
    path = path if path.is_absolute() else (directory or Path.cwd()) / path
    if path.suffix or os.path.lexists(path) or name.rstrip().endswith(("/", ".")):
        return path
    return path.with_suffix(suffix)


def check_name(name: str, directory: Path | None = None, suffix: str = ".py") -> str | None:
    """Why the dialog cannot write ``name`` (the CLI's own message, without its --force advice: the dialog
    asks before replacing a file), or None."""
    try:
        check_output(target_path(name, directory, suffix), force=True, example=f"export{suffix}")
    except ExplainError as exc:
        return str(exc)
    return None


def export(trace: Trace, steps: list[str] | None, narration: dict[str, Any] | None, path: Path,
           overwrite: bool = False) -> Path:
    """Write the export to ``path`` (replacing it only with ``overwrite``) and return where it went."""
    from explain.export import write_export  # lazy: numpy off the shape path

    return Path(write_export(trace, path, steps=steps, fmt="py", force=overwrite, narration=narration))


def write_picture(svg: str, path: Path, overwrite: bool = False) -> Path:
    """Write an SVG screenshot to ``path`` atomically (replacing a file only with ``overwrite``) and return
    where it went."""
    return write_bytes(path, svg.encode("utf-8"), force=overwrite)
