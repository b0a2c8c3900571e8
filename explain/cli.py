"""The ``explain`` command line: a click group, thin over the core.

Subcommands live one per module in :mod:`explain.commands` and are imported only when they are invoked (the
"lazy group" pattern from click's documentation), so ``explain check`` starts without importing numpy or
textual. Errors from the core (:class:`~explain.core.errors.ExplainError`) become one line on stderr, ``Error: …``,
with the error's exit code (2 usage, 1 domain), never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import re
import sys
from collections.abc import Iterator

import click

from explain import __version__
from explain.core.errors import ExplainError
from explain.core.text import visible

# name -> "module:attribute"; the module is imported only when the command runs or its help is shown.
COMMANDS: dict[str, str] = {
    "run": "explain.commands.run:run",
    "params": "explain.commands.run:params",
    "shapes": "explain.commands.shapes:shapes",
    "check": "explain.commands.check:check",
    "export": "explain.commands.export:export",
    "tutorial": "explain.commands.tutorial:tutorial",
    "generate": "explain.commands.generate:generate",
    "lens": "explain.commands.interp:lens",
    "attribute": "explain.commands.interp:attribute",
    "patch": "explain.commands.interp:patch",
    "train": "explain.commands.train:train",
    "tokenize": "explain.commands.tokenize:tokenize",
    "models": "explain.commands.models:models",
    "fetch": "explain.commands.models:fetch",
    "serve": "explain.commands.serve:serve",
}

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)  # a broken import is a bug: let it show

    def invoke(self, ctx: click.Context):  # noqa: D102 - documented on the class
        try:
            with _bars():
                return super().invoke(ctx)
        except ExplainError as exc:
            _fail(str(exc), exc.exit_code)

    def main(self, *args, **kwargs):  # noqa: D102
        # click's own usage errors print the usage and a hint over three lines; the house style is one line
        # that names the problem and where to look, exit code 2.
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
            sys.stdout.flush()  # a full disk or closed pipe is reported here, not at interpreter exit
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "explain"
            _fail(f"{exc.format_message()} (see '{where} --help')", 2)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.exceptions.Abort:
            _fail("aborted", 1, prefix="")
        except MemoryError:  # what to shrink depends on the command: train has no --backward, its corpus is the input
            args = list(args[0]) if args and args[0] is not None else sys.argv[1:]
            if args[:1] == ["train"]:
                _fail("ran out of memory; use a smaller --corpus, --batch-size or --context, fewer --layers, or a "
                      "smaller --d-model/--d-ff (explain refuses runs it can estimate; this one was not)", 1)
            _fail("ran out of memory; use a shorter input or drop --backward (without --checkpoint, fewer --layers "
                  "or a smaller --vocab/--d-model too; explain refuses runs it can estimate; this one was not)", 1)
        except BrokenPipeError:
            _quiet_stdout()  # the reader went away (explain … | head): not an error of ours
            sys.exit(0)
        except OSError as exc:
            if not _is_stdout_error(exc):
                raise
            _quiet_stdout()
            _fail(f"cannot write the output: {exc.strerror or exc}; write to a file on a disk with free space "
                  "or to a terminal", 1)
        sys.exit(rv if isinstance(rv, int) else 0)


@contextlib.contextmanager
def _bars() -> Iterator[None]:
    """rich's progress bars (a fetch's download, dequantizing) for the command, when stderr is a terminal. Piped,
    a command keeps :mod:`explain.core.progress`'s own default, one plain line per notice, so nothing is loaded:
    ``explain check`` never imports the progress machinery (about 1.6M instructions, 3 modules; issue 38)."""
    try:
        terminal = os.isatty(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a replaced stderr (a test's, a closed one) is no terminal
        terminal = False
    if not terminal:
        yield
        return
    from explain.commands.bars import LazyBars  # lazy: only a terminal shows bars; rich loads when the first shows
    from explain.core import progress  # lazy: as above

    with progress.reporting(LazyBars()):
        yield


def _fail(message: str, code: int, prefix: str = "Error: ") -> None:
    """One line on stderr and exit: control characters shown, never obeyed; numbers of thousands of digits
    (a pasted value echoed back) shortened."""
    text = _LONG_NUMBER.sub(lambda m: f"{m[0][:12]}…({len(m[0]):,} digits)", visible(message))
    try:
        click.echo(f"{prefix}{text[:1].upper() + text[1:] if not prefix else text}", err=True)
    except OSError:
        pass
    sys.exit(code)


_LONG_NUMBER = re.compile(r"\d{40,}")


def _is_stdout_error(exc: OSError) -> bool:
    """An OSError from writing stdout (ENOSPC on /dev/full, EIO, EPIPE) rather than from a file we read."""
    return exc.errno in (errno.ENOSPC, errno.EIO, errno.EPIPE, errno.EFBIG) and exc.filename is None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush of what is still buffered fails silently."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="explain")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Step through a transformer one operation at a time.

    With no command, opens the TUI on the first tutorial.

    \b
    Examples:
      explain                          # the TUI on the first tutorial
      explain run gpt --plain          # every step of a tiny GPT, printed
      explain shapes gpt --d-model 768 --heads 12 --layers 12
      explain check "softmax(Q @ K.T / sqrt(d)) @ V" --shape Q=4,8 --shape K=4,8 --shape V=4,8 --dim d=8
    """
    if ctx.invoked_subcommand is None:
        from explain.commands.open import open_default  # lazy: a command loads when invoked

        open_default()
