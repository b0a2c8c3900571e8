"""Export any computation of a trace (one step, a range of steps, or the whole run) as a standalone Python
script that needs only numpy, or as a Jupyter notebook, and that checks itself against the recorded values.

| function | gives |
| --- | --- |
| :func:`export_source` | the script's text, and the arrays of its sidecar ``.npz`` (``{}`` if none) |
| :func:`write_export` | the script (``fmt="py"``) or notebook (``fmt="ipynb"``) written to a path, with its sidecar |

How it is built: :mod:`~explain.export.plan` decides what the export contains (each step's code is its op's
own ``source()``, helpers are copied from :mod:`explain.ops.kernels`); :mod:`~explain.export.values` writes
arrays as exact literals; :mod:`~explain.export.script` and :mod:`~explain.export.notebook` lay it out.
A step ``blocks.0.attn.W_Q`` is the variable ``blocks_0_attn_W_Q``; small values are literals, and past
:data:`~explain.export.values.LITERAL_LIMIT` values they go to ``foo.npz`` beside ``foo.py``.

It may import ``core``, ``ops``, ``trace`` and ``io``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from explain.core.errors import UsageError
from explain.export.notebook import nbformat_module, notebook
from explain.export.plan import Export, build, default_filename
from explain.export.script import script_text
from explain.export.values import LITERAL_LIMIT
from explain.io.atomic import write_together
from explain.io.paths import check_output
from explain.trace import Trace

FORMATS = {"py": ".py", "ipynb": ".ipynb"}

__all__ = ["write_export", "export_source", "default_filename", "FORMATS", "LITERAL_LIMIT"]


def export_source(trace: Trace, *, steps: list[str] | None = None, narration: dict[str, str] | None = None,
                  sidecar_name: str | None = None) -> tuple[str, dict[str, Any]]:
    """The script exporting ``steps`` (None: every step) and its sidecar's arrays (``{}`` when every value
    is a literal). ``sidecar_name`` (``foo.npz``) names the script ``foo.py`` in its docstring; the script
    always loads the ``.npz`` named after itself, beside itself."""
    export = build(trace, steps, narration)
    file_name = sidecar_name.rsplit(".", 1)[0] + ".py" if sidecar_name else None
    return script_text(export, file_name), export.arrays


def write_export(trace: Trace, path: str | Path, *, steps: list[str] | None = None, fmt: str = "py",
                 force: bool = False, narration: dict[str, str] | None = None) -> Path:
    """Write the export of ``steps`` (None: the whole run; ``[name]``: one step; ``names[i:j + 1]``: a
    range) to ``path`` as a script (``fmt="py"``, a ``.py`` path) or a notebook (``fmt="ipynb"``), with a
    sidecar ``.npz`` of the same name when the values are too many for literals. Nothing existing is
    overwritten unless ``force``; every problem is a one-line :class:`~explain.core.errors.ExplainError` raised
    before anything is written. Returns the path written."""
    return write_export_files(trace, path, steps=steps, fmt=fmt, force=force, narration=narration)[0]


def write_export_files(trace: Trace, path: str | Path, *, steps: list[str] | None = None, fmt: str = "py",
                       force: bool = False, narration: dict[str, str] | None = None) -> tuple[Path, Export]:
    """:func:`write_export`, also returning the :class:`~explain.export.plan.Export` written (whether it
    has a sidecar, what it checks), for the CLI's report."""
    path = Path(path)
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format '{fmt}'; use one of: {', '.join(FORMATS)}")
    check_output(path, force, example=f"export{FORMATS[fmt]}")  # '.' is a folder, not a name to add .py to
    if path.suffix != FORMATS[fmt]:
        what = {"py": "a script", "ipynb": "a notebook"}[fmt]
        raise UsageError(f"{what} must be named *{FORMATS[fmt]}, not '{path.name}'; "
                         f"e.g. '{path.with_suffix(FORMATS[fmt])}'")
    if fmt == "ipynb":
        nbformat_module()  # a missing optional extra is an error before any work
    export = build(trace, steps, narration)
    sidecar = path.with_suffix(".npz") if export.sidecar else None
    targets = [check_output(t, force, example=f"export{FORMATS[fmt]}") for t in (path, sidecar) if t is not None]
    if fmt == "py":
        data = script_text(export, path.name).encode()
    else:
        data = nbformat_module().writes(notebook(export, path.name)).encode() + b"\n"
    # the script and its sidecar are renamed into place together: an export is whole or not there at all
    with write_together(targets, force=force) as files:
        files[0].write(data)
        if sidecar is not None:
            np.savez(files[1], **export.arrays)  # straight into the file: a big run's arrays are not copied
    return path, export
