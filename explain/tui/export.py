"""Export from the TUI: the current step (``x``) or the whole run (``X``) as a numpy script, through
:func:`explain.export.write_export`. The step screen asks for the file name (prefilled with :func:`default_name`,
in the working directory) and asks before overwriting a file; :func:`ask_path` is that dialog, which the screen's
picture (``c``, :mod:`explain.tui.picture`) uses too."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explain.core.errors import ExplainError
from explain.core.served import served
from explain.io.paths import check_output, expand
from explain.trace import Trace
from explain.tui.tutorial import narration_map


def step_stem(name: str) -> str:
    """``blocks.0.attn.scores`` → ``blocks_0_attn_scores``."""
    return name.replace(".", "_")


def default_name(trace: Trace, steps: list[str] | None) -> str:
    """The file name offered: the step's name, or ``MODEL_run``, as a .py file."""
    return f"{step_stem(steps[0]) if steps else f'{trace.config.model}_run'}.py"


def target_path(name: str, directory: Path | None = None, suffix: str = ".py") -> Path:
    """The file a typed name means: relative names are in ``directory`` (the working directory), ``~`` is
    expanded, and a new name without a suffix gets ``suffix`` (what exists is taken as it is: ``/dev/full`` is
    the device, refused, not ``/dev/full.svg``). A name no file can have is a
    :class:`~explain.core.errors.UsageError` (:func:`explain.io.paths.expand`)."""
    path = expand(name)
    path = path if path.is_absolute() else (directory or Path.cwd()) / path
    if path.suffix or os.path.lexists(path) or name.rstrip().endswith(("/", ".")):
        return path
    return path.with_suffix(suffix)


ALLOW_WRITES = "EXPLAIN_ALLOW_WRITES"  # explain serve --allow-writes DIR, in each visitor's environment


def allowed_folder() -> Path | None:
    """Served, the folder a visitor may write into (``explain serve --allow-writes``), or None: then exports and
    pictures are downloads. In a terminal, None too (the working directory, as always)."""
    folder = os.environ.get(ALLOW_WRITES)
    return Path(folder) if served() and folder else None


def check_name(name: str, directory: Path | None = None, suffix: str = ".py") -> str | None:
    """Why the dialog cannot write ``name`` (the CLI's own message, without its --force advice: the dialog
    asks before replacing a file), or None. Served, a name outside the allowed folder is refused."""
    try:
        path = target_path(name, directory, suffix)
        if directory is not None and not path.resolve().is_relative_to(directory.resolve()):
            return f"'{name}' is outside {directory}, the folder explain serve allows writes in"
        check_output(path, force=True, example=f"export{suffix}")
    except ExplainError as exc:
        return str(exc)
    return None


def ask_path(host: Any, what: str, default: str, suffix: str, write: Callable[[Path, bool], None],
             opener: str | None = None) -> None:
    """Ask ``host``'s app for a file name (prefilled, in the working directory; checked as the CLI checks ``-o``,
    the message beside the field), ask again before replacing a file, then ``write(path, overwrite)``. ``opener``
    is the key that opened the dialog: pressed again before the name is edited it does not reach the field."""
    from explain.tui.screens.confirm import ConfirmScreen  # lazy: a screen loaded on first use
    from explain.tui.screens.prompt import PromptScreen  # lazy: a screen loaded on first use

    folder = allowed_folder()

    def named(name: str | None) -> None:
        if name is None:
            return
        path = target_path(name, folder, suffix=suffix)
        if not os.path.lexists(path):
            write(path, False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                write(path, True)
            else:
                host.notify("nothing written", timeout=3)

        host.app.push_screen(ConfirmScreen(f"`{path}` exists. Replace it?", yes="Replace", no="Keep it"), answered)

    host.app.push_screen(PromptScreen(f"{what}. File name (in {folder or Path.cwd()}):", default,
                                      lambda name: check_name(name, folder, suffix=suffix), opener=opener), named)


def export(trace: Trace, steps: list[str] | None, narration: dict[str, Any] | None, path: Path,
           overwrite: bool = False) -> Path:
    """Write the export to ``path`` (replacing it only with ``overwrite``) and return where it went."""
    from explain.export import write_export  # lazy: numpy off the shape path

    return Path(write_export(trace, path, steps=steps, fmt="py", force=overwrite, narration=narration))


def save_export(controller: Any, steps: list[str] | None) -> None:
    """``x``/``X``: a numpy script of the step or the run, named by the user, written as one of the controller's
    jobs (in a cancellable thread; atomic, so ``q`` leaves the old file); a tutorial's narration goes along with
    its own run."""
    trace, tour = controller.trace, controller.host.tour
    narration = narration_map(trace, tour.tutorial) if tour is not None and tour.trace is trace else None
    if narration is not None and steps:
        narration = {k: v for k, v in narration.items() if k in steps} or None

    def write(path: Path, overwrite: bool) -> None:
        controller.start(lambda: export(trace, steps, narration, path, overwrite=overwrite), controller.wrote,
                         refused="export failed", group="export")

    what = f"step {steps[0]}" if steps else "the whole run"
    if served() and allowed_folder() is None:  # a visitor writes no file on the server: a download, or one line
        from explain.export import export_source  # lazy: numpy off the shape path

        text, arrays = export_source(trace, steps=steps, narration=narration)
        if arrays:
            controller.host.notify("this export needs a .npz file beside the script, and explain serve allows no "
                                   "writes here (the teacher can, with --allow-writes DIR)", severity="error",
                                   timeout=8, markup=False)
            return
        controller.host.app.deliver_text(io.StringIO(text), save_filename=default_name(trace, steps))
        controller.host.notify("export offered as a download", timeout=4)
        return
    ask_path(controller.host, f"Export {what} as a numpy script", default_name(trace, steps), ".py", write,
             opener="x" if steps else "X")
