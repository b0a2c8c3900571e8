"""Export from the TUI: the current step (``x``) or the whole run (``X``) as a numpy script, through
:func:`explain.export.write_export`, and the screen as an SVG picture (``c``). The step screen asks for the
file name (prefilled with :func:`default_name` / :func:`picture_name`, in the working directory) and asks
before overwriting a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    expanded, and a name without a suffix gets ``suffix``."""
    path = Path(name).expanduser()
    if not path.suffix:
        path = path.with_suffix(suffix)
    return path if path.is_absolute() else (directory or Path.cwd()) / path


def export(trace: Trace, steps: list[str] | None, narration: dict[str, Any] | None, path: Path,
           overwrite: bool = False) -> Path:
    """Write the export to ``path`` (replacing it only with ``overwrite``) and return where it went."""
    from explain.export import write_export  # lazy: numpy off the shape path

    return Path(write_export(trace, path, steps=steps, fmt="py", force=overwrite, narration=narration))


def write_picture(svg: str, path: Path, overwrite: bool = False) -> Path:
    """Write an SVG screenshot to ``path`` (replacing a file only with ``overwrite``) and return where it went."""
    with open(path, "w" if overwrite else "x", encoding="utf-8") as f:
        f.write(svg)
    return path
