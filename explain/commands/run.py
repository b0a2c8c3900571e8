"""``explain run MODEL`` (the TUI, or ``--plain``/``--json``) and ``explain params MODEL -o FILE.npz``."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from explain.commands.link import is_link, open_link_here
from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.core.errors import UsageError
from explain.core.served import interactive
from explain.io.paths import check_output


def save_options(f):
    """``--save FILE`` and its ``--force``, for run and generate."""
    f = click.option("--force", is_flag=True, help="Overwrite the --save file if it exists.")(f)
    return click.option("--save", metavar="FILE.npz", help="Write every step's values (keys: step names) to "
                        "FILE.npz, or to FILE.safetensors; with neither --plain nor --json, nothing else.")(f)


def check_outputs(plain: bool, as_json: bool, save: str | None, force: bool) -> None:
    """Refuse clashing outputs and a bad --save path before the run, which may be slow."""
    if plain and as_json:
        raise UsageError("choose one of --plain and --json")
    if save is not None:
        from explain.io.save import check_save_path  # lazy: numpy loads only when values are computed

        check_output(save, force, example="trace.npz")  # what the path is first: '.' is a folder
        check_save_path(save)


def pick_options(f):
    """``--match``, ``--slice`` and ``--cell``: what of the run --plain and --json print (:mod:`explain.report.pick`)."""
    f = click.option("--cell", metavar="I,J,…", help="With --plain/--json: one cell's drill-down (how it was "
                     "computed) for each step --match picks, e.g. --cell 0,1.")(f)
    f = click.option("--slice", "slice_", metavar="AXIS=I,…", help="With --plain/--json: the slice each step "
                     "shows, by axis name, e.g. --slice batch=1,head=3 (rows and columns are never sliced).")(f)
    return click.option("--match", metavar="GLOB", help="With --plain/--json: only the steps whose names match: a "
                        "glob ('blocks.*.attn.pattern') or a dotted prefix ('blocks.0').")(f)


def check_pick(plain: bool, as_json: bool, match: str | None, slice_: str | None, cell: str | None) -> None:
    """Refuse --match/--slice/--cell without an output they choose from, or misspelt, before the run."""
    if (match, slice_, cell) == (None, None, None):
        return
    if not (plain or as_json):
        raise UsageError("--match, --slice and --cell choose what --plain or --json prints; add one of them")
    from explain.report.pick import parse_cell, parse_slice  # lazy: the trace module loads only with them

    if slice_ is not None:
        parse_slice(slice_)
    if cell is not None:
        parse_cell(cell)


def saving(save: str | None, force: bool) -> Any:
    """The block a run with ``--save FILE.npz`` records in: its steps are written while it runs
    (:func:`explain.io.save.save_stream`; ``stream.add`` is the run's ``on_tensor``), and the file is removed again
    if anything in the block fails. Without --save (or with .safetensors, written after the run) it yields None."""
    if save is None:
        return contextlib.nullcontext()
    from explain.io.save import save_stream  # lazy: numpy loads only when values are computed

    return save_stream(save, force)


def show(trace, options: dict, *, plain: bool = False, as_json: bool = False, precision: int = 4,
         save: str | None = None, force: bool = False, start: str | None = None, tutorial: Any = None,
         match: str | None = None, slice_: str | None = None, cell: str | None = None, stream: Any = None) -> None:
    """Where a run or a generation goes, the one output path: the --save file (finishing ``stream``, the one
    :func:`saving` began, if any), then the --json document, the --plain listing (also when stdout is not a
    terminal; only what ``match``, ``slice_`` and ``cell`` pick, checked before anything is written) or the TUI,
    opened at ``start`` (or in ``tutorial``) with ``options`` for its re-run form."""
    pick = None
    if (match, slice_, cell) != (None, None, None):
        from explain.report.pick import make_pick  # lazy: only with --match/--slice/--cell

        pick = make_pick(trace, match, slice_, cell)
    if save is not None:
        from explain.io.save import save_trace  # lazy: numpy loads only when values are computed

        written, n, size = save_trace(trace, save, force) if stream is None else stream.finish(trace)
        click.echo(f"wrote {n} tensors ({size / 2**20:,.1f} MiB) to {written}", err=True)
        if not (plain or as_json):
            return
    if as_json:
        from explain.render.plain import write_trace_json  # lazy: rich out of the core

        write_trace_json(trace, sys.stdout.write, pick)  # streamed: the document is never whole in memory
        sys.stdout.write("\n")
    elif plain or not interactive():
        from rich.console import Console  # lazy: rich out of the core

        from explain.render.plain import print_trace  # lazy: rich out of the core

        print_trace(Console(), trace, precision, pick)
    else:
        from explain.tui import open_trace  # lazy: textual only with the TUI

        open_trace(trace, tutorial, options=options, start=start)


@click.command(epilog=MODEL_HELP)
@model_options
@click.option("--plain", is_flag=True, help="Print every step to stdout instead of opening the TUI.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document with every step's values.")
@click.option("--precision", type=click.IntRange(0, 12), default=4, show_default=True, help="Digits after the point.")
@save_options
@pick_options
def run(model: str, plain: bool, as_json: bool, precision: int, save: str | None, force: bool, match: str | None,
        slice_: str | None, cell: str | None, **kwargs) -> None:
    """Run MODEL one operation at a time and step through it.

    Without --plain or --json, opens the TUI on the run. gpt opens the trained model that ships with explain
    unless --random-weights, --weights, --checkpoint or a size option is given; random weights come from
    --seed. The header says which: "trained: gpt-tiny" or "random, seed N".

    \b
    Examples:
      explain run gpt --trained --plain
      explain run gpt --random-weights --seed 3 --plain
      explain run attention --text "Thinking Machines" --d-model 4
      explain run simple --embeddings journey.npy --text "Your journey starts with one step" --plain
      explain run multihead --heads 4 --d-model 16 --json > run.json
      explain run gpt --save run.npz
      explain run multihead --heads 4 --d-model 16 --plain --match attn.pattern --slice head=3
      explain run attention --text "Thinking Machines" --plain --match attn.pattern --cell 0,1
      explain run '?tutorial=18&stop=3'          # a link (the TUI's U key shows the one to its screen)
    """
    if model is not None and is_link(model):  # explain run '?tutorial=18&stop=3': what the U key showed
        return open_link_here(model, plain or as_json or save is not None or (match, slice_, cell) != (None,) * 3)
    check_outputs(plain, as_json, save, force)
    check_pick(plain, as_json, match, slice_, cell)
    from explain.engine.api import (
        run as run_model,  # lazy: a command loads the engine when it runs, not for --help (bench_check_startup)
    )

    options = run_kwargs(model, kwargs)
    with saving(save, force) as stream:
        trace = run_model(model, on_tensor=stream and stream.add, **options)
        show(trace, options, plain=plain, as_json=as_json, precision=precision, save=save, force=force, match=match,
             slice_=slice_, cell=cell, stream=stream)  # the re-run form starts from these options (and keeps --checkpoint)


@click.command(epilog=MODEL_HELP)
@model_options
@click.option("-o", "--output", "output", required=True, metavar="FILE.npz", help="Where to write the parameters.")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
def params(model: str, output: str, force: bool, **kwargs) -> None:
    """Write every parameter of MODEL under its dotted name to an .npz file.

    Edit the file and load it back with --weights.

    \b
    Example:
      explain params attention --d-model 4 -o attn.npz
      explain run attention --d-model 4 --weights attn.npz --plain
    """
    check_output(output, force, example="params.npz")  # before the run, which may be slow
    if Path(output).suffix != ".npz":
        raise UsageError(f"'{output}' must end in .npz (numpy would add the suffix and write another file)")
    from explain.engine.api import (
        run as run_model,  # lazy: a command loads the engine when it runs, not for --help (bench_check_startup)
    )
    from explain.engine.weights import (
        save_params,  # lazy: numpy loads only when values are computed (test_shapes_imports)
    )

    trace = run_model(model, **run_kwargs(model, kwargs))
    save_params(trace.params, output, force=force)  # atomic, and exclusive without --force
    click.echo(f"wrote {len(trace.params)} parameters ({trace.n_params:,} values) to {output}", err=True)
