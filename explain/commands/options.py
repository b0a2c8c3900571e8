"""The options every model-taking command shares (``run``, ``params``, ``shapes``, ``export``, ``generate``, the
lens, attribution, patching), generated from their definitions in :mod:`explain.core.options`: an option the command
cannot use (:func:`explain.core.takes.takes`) is hidden from its --help and refused if given. Importing this module
imports only click."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import click

from explain.checkpoints.catalogue import CATALOGUE
from explain.core import progress
from explain.core.options import OPTIONS, Option
from explain.core.registry import MODELS, option_help
from explain.core.takes import ALL, COMMANDS, given, refusal, takes


def click_option(o: Option, **extra: Any) -> Callable:
    """The click option of one definition (ranges here are click's usage checks; the config checks the rest);
    ``extra`` goes to click (a refused option's hidden, expose_value and callback)."""
    param_decls, kw = (o.flag, o.name), dict(help=option_help(o), **extra)
    if o.type == "int" and o.group == "generate":  # checked by explain.core.sampling, with its own messages
        return click.option(*param_decls, type=int, metavar=o.metavar or None, **kw)
    if o.type == "int":
        return click.option(*param_decls, type=click.IntRange(min=o.min), **kw)
    if o.type == "float":
        return click.option(*param_decls, type=float, metavar=o.metavar or None, **kw)
    if o.type == "flag":
        return click.option(*param_decls, is_flag=True, **kw)
    if o.type == "choice":
        return click.option(*param_decls, type=click.Choice(list(o.choices)), **kw)
    if o.type == "bool":  # unset (None) unless given, so the config keeps the model's default
        if o.off_flag:
            return click.option(f"{o.flag}/{o.off_flag}", o.name, default=None, **kw)
        return click.option(*param_decls, is_flag=True, default=None, **kw)
    return click.option(*param_decls, multiple=o.multiple, metavar=o.metavar or None, **kw)


def refused_option(command: str, o: Option) -> Callable:
    """``o`` on a command that cannot use it: hidden from --help, never passed to the command, and refused in one
    line (exit 2) when given, naming what would use it (:func:`explain.core.takes.refusal`)."""

    def refuse(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if given(o, value):
            raise click.UsageError(refusal(command, o), ctx=ctx)

    return click_option(o, hidden=True, expose_value=False, callback=refuse)


def pick_model(model: str | None, kwargs: dict[str, Any]) -> str:
    """MODEL as given, or, when it is left out, the model a --checkpoint holds (gpt or llama, read from the
    file's config; the opened checkpoint replaces the path in ``kwargs``, so the run does not open it again); a
    usage error when there is neither."""
    if model:
        return model
    if not kwargs.get("checkpoint"):
        raise click.UsageError(f"give a MODEL ({', '.join(MODELS)}), or --checkpoint PATH to run the model it holds")
    from explain.checkpoints.open import open_checkpoint  # lazy: the readers load only when MODEL is left out

    kwargs["checkpoint"] = ck = open_checkpoint(kwargs["checkpoint"])
    return ck.model


def catalogue_model(model: str | None, kwargs: dict[str, Any]) -> str | None:
    """A catalogue name given as MODEL (``explain run smollm2``) is ``--checkpoint NAME``: the model it holds is
    read from the file. No catalogue name is a model name (:mod:`explain.checkpoints.catalogue`)."""

    if model is None or model in MODELS or model not in CATALOGUE:
        return model
    if kwargs.get("checkpoint") is not None:
        raise click.UsageError(f"'{model}' is a model of the catalogue and --checkpoint gives another; keep one")
    kwargs["checkpoint"] = model
    return None


def model_options(f: Callable, helps: dict[str, str] | None = None) -> Callable:
    """Decorate a command with the MODEL argument (optional with --checkpoint) and the shared model options, those
    the command (named as its function: a name of :data:`explain.core.takes.COMMANDS`) cannot use hidden and
    refused; ``helps`` gives an option a command's own help text (generate's --text: its prompts are never padded)."""
    command = f.__name__
    assert command in COMMANDS, f"{command}: name its options' rule in explain.core.takes.COMMANDS"

    @functools.wraps(f)
    def with_model(*args: Any, model: str | None = None, quiet: bool = False, **kwargs: Any) -> Any:
        with progress.reporting(progress.Plain(quiet=True)) if quiet else contextlib.nullcontext():
            model = catalogue_model(model, kwargs)
            return f(*args, model=pick_model(model, kwargs), **kwargs)

    g: Callable = click.option("-q", "--quiet", is_flag=True, help="No progress bars or notices on stderr (a "
                               "catalogue model's first fetch, dequantizing a GGUF); errors only.")(with_model)
    for o in reversed(ALL):
        if not takes(command, o):
            g = refused_option(command, o)(g)
        else:
            g = click_option(replace(o, help=helps[o.name]) if helps and o.name in helps else o)(g)
    return click.argument("model", metavar="[MODEL]", required=False)(g)


def run_kwargs(model: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The command's option values as keyword arguments of :func:`explain.engine.api.run` (unset ones dropped);
    pops them from ``kwargs`` so the command keeps only its own options. The model's name is checked by the run's
    request (:func:`explain.engine.ask.make_request`), once."""
    out = {}
    for o in OPTIONS:
        v = kwargs.pop(o.name, None)
        if v is None or v == ():
            continue
        out[o.name] = list(v) if o.multiple else v
    for name in ("text", "target", "tokens"):  # one value as itself, several as a list (a batch)
        if name in out and len(out[name]) == 1:
            out[name] = out[name][0]
    return out


MODEL_HELP = ("MODEL is one of: " + ", ".join(MODELS) + "; it may be left out with --checkpoint, which then picks "
              "it from the file. A model of 'explain models' (smollm2, …) may stand in MODEL's place: it is "
              "--checkpoint NAME, fetched on first use.")
