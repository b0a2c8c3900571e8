"""``explain shapes MODEL``: every step's operand and output shapes and every parameter's, without running.

The shapes come from :func:`explain.engine.api.plan` (the model code run on shapes, each op's own shape rule); the
layout from :mod:`explain.report.shape_report`. Neither imports numpy or textual, so the command answers at click's speed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import click

from explain.checkpoints.trained import SHIPPED
from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.core.errors import InputError, UsageError
from explain.core.limits import MAX_CONTEXT, check_max
from explain.core.options import default
from explain.core.words import UNK
from explain.report.cost import DTYPES, OWN

if TYPE_CHECKING:
    from explain.checkpoints.protocol import Checkpoint
    from explain.engine.ask import Request


def _with_seq(req: Request, seq: int, cost: bool = False) -> Request:
    """``req`` with token ids for ``--seq N``. The ids never change a shape, so N copies of ``<unk>`` (an id every
    vocabulary has) stand for any N tokens and leave d_vocab at the tokenizer's size, as the default text does.
    Without a checkpoint the context grows to N unless --context is given; with --cost, a rotary checkpoint's
    context is passed (nothing in it is sized by the context), the checkpoint itself untouched."""
    if seq < 1:
        loss = " (and 2 for a loss)" if req.model.loss else ""
        raise UsageError(f"--seq {seq}: a sequence needs at least 1 token{loss}; give --seq 1 or more")
    inputs = {"text": req.text, "tokens": req.tokens, "embeddings": req.embeddings}
    given = [f"--{name}" for name, value in inputs.items() if value is not None]
    if given:
        raise UsageError(f"give --seq or {'/'.join(given)}, not both: both set the sequence")
    check_max(seq, MAX_CONTEXT, "--seq")  # a sequence is at most as long as the longest context
    ck, options, context = req.checkpoint, dict(req.options), None
    if ck is not None and Path(ck.path).resolve() == SHIPPED:  # the trained model: its context is fixed by its config
        if seq > ck.options["n_ctx"]:
            raise InputError(f"--seq {seq} is longer than the trained model's context of {ck.options['n_ctx']} "
                             f"positions; use --seq {ck.options['n_ctx']} or less, or a size option (--context "
                             f"{seq}) for a random model that long")
    elif ck is not None:  # plan()'s refusal would say "shorten the text"
        if seq > ck.options["n_ctx"] and cost and req.model.can("rope"):
            click.echo(f"note: --seq {seq:,} is beyond the checkpoint's context of {ck.options['n_ctx']:,} positions; "
                       "the cost is what that many tokens would take (rotary positions: nothing in the model is "
                       "sized by the context)", err=True)
            context = seq
        if seq > (context or ck.options["n_ctx"]):
            raise InputError(f"--seq {seq} is longer than the checkpoint's context of {ck.options['n_ctx']} "
                             f"positions; use --seq {ck.options['n_ctx']} or less")
    else:
        if options.get("n_ctx") is None:  # no --context: a context as long as the sequence asked for
            options["n_ctx"] = max(seq, default("n_ctx"))
        if seq > options["n_ctx"]:
            raise InputError(f"--seq {seq} is longer than the context of {options['n_ctx']} positions; "
                             f"use --seq {options['n_ctx']} or less, or --context {seq}")
    return replace(req, tokens=[UNK] * seq, options=MappingProxyType(options), context=context)


UNTOKENIZED = 8  # the sequence planned for a checkpoint folder without tokenizer.json, when --seq is not given


def _untokenized(ck: Checkpoint) -> int | None:
    """For a checkpoint folder with no tokenizer.json (a config.json alone, as for counting a model's parameters),
    the length to plan when no input is given, said on stderr; None when the folder has its tokenizer."""
    if ck.tokenizer_path is not None:
        return None
    n = min(UNTOKENIZED, ck.options["n_ctx"])
    click.echo(f"note: {ck.path} has no tokenizer.json: the steps are for {n} tokens (give --seq N for another "
               "length)", err=True)
    return n


@click.command(epilog=MODEL_HELP)
@model_options
@click.option("--seq", type=int, metavar="N", help="Shapes for an input of N tokens, instead of the default "
              "text.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document (config, steps, params, n_params).")
@click.option("--match", metavar="GLOB", help="Only steps and parameters whose names match: a glob "
              "('blocks.*.attn.q') or a dotted prefix ('blocks.0').")
@click.option("--steps/--no-steps", "show_steps", default=True, show_default=True, help="List the steps.")
@click.option("--params/--no-params", "show_params", default=True, show_default=True, help="List the parameters.")
@click.option("--cost", "show_cost", is_flag=True,
              help="What the model costs, each figure with its formula: parameter bytes (float32, bfloat16, as "
                   "stored), the key/value cache per token and at --seq tokens, forward FLOPs per token counted op "
                   "by op (and 6N for training), activation memory. Instead of the lists of steps and parameters.")
@click.option("--batch-size", type=click.IntRange(min=1, max=1_000_000), default=None, metavar="N",
              help="With --cost: sequences in a batch, for the activation memory and the key/value cache.")
@click.option("--dtype", type=click.Choice(DTYPES), default=None,
              help="With --cost: the type of the cache and activations, and one more row of parameter bytes "
                   "(default: the checkpoint's torch_dtype, else float32).")
def shapes(model: str, seq: int | None, as_json: bool, match: str | None, show_steps: bool, show_params: bool,
           show_cost: bool, batch_size: int | None, dtype: str | None, **kwargs) -> None:
    """Show every step's operand shapes → output shape, and every parameter by layer, with the total.

    Nothing is computed: the model code runs on shapes alone, through each op's own shape rule. The
    parameter count is the model's (a tied unembedding is counted once). With --weights FILE.npz the sizes its
    arrays' shapes fix are read from the file's headers (no data), as 'explain run' does. The sizes are
    those of the model 'explain run' opens: for gpt, the trained model that ships with explain, unless
    --random-weights, --weights, --checkpoint or a size option is given (then the defaults and the options).

    \b
    Examples:
      explain shapes gpt                                      # the shipped trained model's sizes
      explain shapes gpt --d-model 768 --heads 12 --layers 12 --d-ff 3072 --vocab 50257 --context 1024
      explain shapes gpt --seq 32 --match blocks.0.attn       # one layer, at sequence length 32
      explain shapes transformer --no-steps                   # parameters only
      explain shapes multihead --heads 4 --d-model 16 --json | jq .n_params
      explain shapes gpt --d-model 768 --heads 12 --layers 12 --d-ff 3072 --vocab 50257 --context 1024 \\
          --seq 1024 --cost                                   # GPT-2 small: bytes, cache, FLOPs per token
    """
    for name, value in (("--batch-size", batch_size), ("--dtype", dtype)):
        if value is not None and not show_cost:
            raise UsageError(f"{name} sizes the figures of --cost; add --cost")
    from explain.engine.api import plan_request  # lazy: engine not loaded for --help
    from explain.engine.ask import make_request  # lazy: as above
    from explain.report.shape_report import (  # lazy: engine not loaded for --help
        select,
        shapes_doc,
        shapes_text,
    )

    kw = run_kwargs(model, kwargs)
    weights = kw.pop("weights", None)
    # the sizes of the model 'explain run' opens (gpt's trained one): the name checked, a checkpoint opened, once;
    # a weights file's headers (not its data) set the sizes its shapes fix, as they do for run
    req = make_request(model, command="shapes", weights=weights, **kw)
    if seq is None and req.checkpoint is not None and req.text is None and req.tokens is None and req.embeddings is None:
        seq = _untokenized(req.checkpoint)  # a config.json alone (no tokenizer.json): shapes for a few tokens
    if seq is not None:
        req = _with_seq(req, seq, show_cost)
    if not (show_steps or show_params) and not as_json:
        raise UsageError("--no-steps with --no-params leaves nothing to show; drop one of them")
    trace = plan_request(req)
    sel = select(trace, match, show_steps, show_params)
    sections = None
    if show_cost:
        from explain.report.cost import cost, cost_doc, cost_lines  # lazy: only --cost

        stored, why = stored_type(req.checkpoint)
        sections = cost(trace, stored=stored, stored_why=why, dtype=dtype, batch=batch_size,
                        cache=req.model.generates)
    if as_json:
        doc = shapes_doc(sel)
        if sections is not None:
            doc["cost"] = cost_doc(sections)
        click.echo(json.dumps(doc, ensure_ascii=False))
    elif sections is not None:
        from explain.report.shape_report import header  # lazy: the report loads only when --cost prints it

        click.echo("\n".join(header(trace, show_tokens=False) + [""] + cost_lines(sections)))
    else:
        click.echo(shapes_text(sel, show_tokens=seq is None))


def stored_type(ck: Checkpoint | None) -> tuple[str | None, str]:
    """The type the parameters are stored in, and where that is said: a checkpoint's config.json (torch_dtype,
    or transformers 5's dtype), a GGUF file's quantization, or explain's own float64 arrays."""
    if ck is None:
        return "float64", OWN
    config = ck.config
    name = config.get("torch_dtype") or config.get("dtype")
    if isinstance(name, str) and name in DTYPES:
        return name, "config.json's torch_dtype" if config.get("torch_dtype") else "config.json's dtype"
    if str(ck.path).endswith(".gguf"):
        return "GGUF", "quantized blocks; the file's size says their bytes"
    return None, ""
