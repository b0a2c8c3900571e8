"""``explain tutorial``: list the shipped walkthroughs, open one (the TUI, or ``--plain`` text), and check a
tutorial file a teacher wrote.

``tutorial`` is a click group whose unknown "subcommand" names are tutorial names or paths, so
``explain tutorial list``, ``explain tutorial check FILE`` and ``explain tutorial NAME|PATH`` all work.
"""

from __future__ import annotations

import json
from typing import Any

import click

from explain.core import progress
from explain.core.errors import UsageError
from explain.core.served import interactive


class TutorialGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, names the tutorial to open."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[Any, Any, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "open", self.commands["open"], args
        return super().resolve_command(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[list | check FILE... | NAME|PATH [--plain] [--answers]]")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The group's options and commands, then the options of ``explain tutorial NAME|PATH`` (--plain,
        --answers, --precision), which belong to the hidden 'open' command but are what most readers want."""
        super().format_options(ctx, formatter)
        opener = self.commands["open"]
        rows = [r for p in opener.get_params(ctx)
                if isinstance(p, click.Option) and "--help" not in p.opts and (r := p.get_help_record(ctx))]
        if rows:
            with formatter.section("Options of 'explain tutorial NAME|PATH'"):
                formatter.write_dl(rows)


@click.group(cls=TutorialGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def tutorial(ctx: click.Context) -> None:
    """Scripted walkthroughs that narrate a run stop by stop and check their own numbers.

    NAME is a shipped tutorial: its full name, its name without the number, or the number. PATH is a .toml
    tutorial file you wrote (the format is in tutorials/README.md). With no argument, opens the TUI on a list
    of the tutorials to choose from (piped, or with 'list', prints the list).

    \b
    Examples:
      explain tutorial list
      explain tutorial thinking-machines          # the TUI, stop by stop
      explain tutorial 3 --plain --answers        # the walkthrough as text
      explain tutorial check my-lesson.toml       # validate a tutorial and run its expectations
      explain tutorial my-lesson.toml --plain
    """
    if ctx.invoked_subcommand is None:
        if _interactive():
            _open_picker()
        else:
            ctx.invoke(list_cmd)


def _open_picker() -> None:
    """The TUI on the first tutorial, with the tutorial picker open over it."""
    from explain.tui import open_trace  # lazy: textual only with the TUI
    from explain.tutorial import (  # lazy: engine not loaded for --help
        list_tutorials,
        run_tutorial,
    )

    first = list_tutorials()[0]
    open_trace(run_tutorial(first), tutorial=first, pick=True)


@tutorial.command("list")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document instead of a table.")
def list_cmd(as_json: bool) -> None:
    """List the shipped tutorials: name, title and number of stops.

    \b
    Example:
      explain tutorial list
    """
    from explain.tutorial import list_tutorials  # lazy: engine not loaded for --help

    tuts = list_tutorials()
    if as_json:
        click.echo(json.dumps([{"name": t.name, "title": t.title, "model": t.model, "stops": len(t.stops),
                                "summary": t.summary} for t in tuts], ensure_ascii=False))
        return
    # plain columns, one tutorial per line, never wrapped: easy to read and to grep
    width = max([len(t.name) for t in tuts] + [4])
    click.echo(f"{'name':<{width}}  stops  {'model':<11}  title")
    for t in tuts:
        click.echo(f"{t.name:<{width}}  {len(t.stops):>5}  {t.model:<11}  {t.title}")


@tutorial.command("check")
@click.argument("files", nargs=-1, metavar="FILE...")
@click.option("--all", "check_all", is_flag=True, help="Check every shipped tutorial.")
@click.option("-q", "--quiet", is_flag=True, help="One line per tutorial instead of one per check.")
def check_cmd(files: tuple[str, ...], check_all: bool, quiet: bool) -> None:
    """Validate tutorial files and run their expectations; print what was checked.

    Exits 1 with a one-line error (file:line, stop, field, fix) at the first problem. FILE may also be a
    shipped tutorial's name.

    \b
    Examples:
      explain tutorial check my-lesson.toml
      explain tutorial check --all -q
    """
    from explain.tutorial import (  # lazy: engine not loaded for --help
        check_tutorial,
        list_tutorials,
        load_tutorial,
    )

    if not files and not check_all:
        raise UsageError("give a tutorial FILE to check, or --all for the shipped ones "
                         "(e.g. explain tutorial check my-lesson.toml)")
    tuts = [load_tutorial(f) for f in files] + (list_tutorials() if check_all else [])
    for tut in tuts:
        _say_fetch(tut)
        report = check_tutorial(tut)
        where = tut.source.path if tut.source is not None else tut.name  # the file as the user named it
        _check_drawn(tut, where)
        click.echo(f"✓ {where}: {len(tut.stops)} stops, {len(report.checks)} checks passed "
                   f"({tut.model}, {len(report.trace)} steps)")
        if quiet:
            continue
        for c in report.checks:
            click.echo(f"  stop {c.stop:>2} {c.step}: {c.kind}: {c.detail}")


def _check_drawn(tut: Any, where: Any) -> None:
    """Refuse a stop whose narration, question or answer loses words when drawn (a ``<token>`` taken for HTML)."""
    from explain.render.narration import dropped  # lazy: rich is not loaded for --help
    from explain.tutorial.errors import TutorialError  # lazy: engine not loaded for --help

    for stop in tut.stops:
        for field in ("narration", "question", "answer"):
            lost = dropped(getattr(stop, field, None) or "")
            if lost:
                shown = ", ".join(repr(w) for w in lost[:5])
                raise TutorialError(f"{where}: stop {stop.number} '{stop.title}': the {field} draws without {shown}; "
                                    "write a token in backticks (`<bos>`) or escape it (\\<bos>)")


@tutorial.command("open")
@click.argument("name", metavar="NAME|PATH")
@click.option("--plain", is_flag=True, help="Print the walkthrough to stdout instead of opening the TUI.")
@click.option("--answers", is_flag=True, help="With --plain, print each question's answer too.")
@click.option("--precision", type=click.IntRange(0, 12), default=4, show_default=True, help="Digits after the point.")
def open_cmd(name: str, plain: bool, answers: bool, precision: int) -> None:
    """Open a tutorial (the same as 'explain tutorial NAME|PATH').

    Runs the model, checks every expectation, then opens the TUI in tutorial mode, or with --plain prints
    each stop: the narration, the step, the focused cell's explanation and the question.

    \b
    Examples:
      explain tutorial open thinking-machines
      explain tutorial 1 --plain --answers
    """
    from explain.tutorial import (  # lazy: engine not loaded for --help
        load_tutorial,
        run_tutorial,
    )

    tut = load_tutorial(name)
    _say_fetch(tut)
    trace = run_tutorial(tut)
    if not plain and _interactive():
        from explain.tui import open_trace  # lazy: textual only with the TUI

        open_trace(trace, tutorial=tut)
        return
    from rich.console import Console  # lazy: rich out of the core

    from explain.render.walkthrough import print_walkthrough  # lazy: rich out of the core

    print_walkthrough(Console(), tut, trace, answers=answers, precision=precision)


def _say_fetch(tut: Any) -> None:
    """Before a tutorial that runs a catalogue model not on this machine: say that it is fetched first (the fetch
    then shows its progress bar)."""
    from explain.tutorial import to_fetch  # lazy: engine not loaded for --help

    message = to_fetch(tut)
    if message:
        progress.note(f"{tut.title}: {message}")


def _interactive() -> bool:
    """Whether stdout is a terminal or the app is served (the TUI); a pipe gets the plain walkthrough, as
    ``explain run`` does."""
    return interactive()
