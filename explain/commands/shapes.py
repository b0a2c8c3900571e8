"""``explain shapes MODEL``: every step's operand and output shapes and every parameter's, without running.

The shapes come from :func:`explain.engine.api.plan` (the model code run on shapes, each op's own shape rule); the
layout from :mod:`explain.report.shape_report`. Neither imports numpy or textual, so the command answers at click's speed.
"""

from __future__ import annotations

import json

import click

from explain.checkpoints.trained import SHIPPED, use_trained
from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.core.errors import InputError, UsageError
from explain.core.limits import MAX_CONTEXT, check_max
from explain.core.options import default
from explain.core.registry import MODELS
from explain.core.words import UNK
from explain.report.cost import DTYPES, OWN


def _seq_tokens(model: str, seq: int, kw: dict, cost: bool = False) -> list[int]:
    """Token ids for ``--seq N``. The ids never change a shape, so N copies of ``<unk>`` (an id every
    vocabulary has) stand for any N tokens and leave d_vocab at the tokenizer's size, as the default text does."""
    if seq < 1:
        loss = " (and 2 for a loss)" if MODELS[model].loss else ""
        raise UsageError(f"--seq {seq}: a sequence needs at least 1 token{loss}; give --seq 1 or more")
    given = [f"--{name}" for name in ("text", "tokens", "embeddings") if name in kw]
    if given:
        raise UsageError(f"give --seq or {'/'.join(given)}, not both: both set the sequence")
    check_max(seq, MAX_CONTEXT, "--seq")  # a sequence is at most as long as the longest context
    if kw.get("checkpoint") == str(SHIPPED):  # the trained model: its context is fixed by its config
        n_ctx = json.loads((SHIPPED / "config.json").read_text())["n_positions"]
        if seq > n_ctx:
            raise InputError(f"--seq {seq} is longer than the trained model's context of {n_ctx} positions; use "
                             f"--seq {n_ctx} or less, or a size option (--context {seq}) for a random model that "
                             "long")
    elif kw.get("checkpoint") is not None:  # opened once here, for plan() too: run's refusal says "shorten the text"
        from explain.checkpoints.open import open_checkpoint  # lazy: the readers load only for a checkpoint

        ck = kw["checkpoint"]
        kw["checkpoint"] = ck = open_checkpoint(ck) if isinstance(ck, str) else ck
        if seq > ck.options["n_ctx"] and cost and MODELS[ck.model].can("rope"):
            click.echo(f"note: --seq {seq:,} is beyond the checkpoint's context of {ck.options['n_ctx']:,} positions; "
                       "the cost is what that many tokens would take (rotary positions: nothing in the model is "
                       "sized by the context)", err=True)
            ck.options["n_ctx"] = seq
        if seq > ck.options["n_ctx"]:
            raise InputError(f"--seq {seq} is longer than the checkpoint's context of {ck.options['n_ctx']} "
                             f"positions; use --seq {ck.options['n_ctx']} or less")
    if "checkpoint" not in kw:  # a checkpoint's context is checked by plan() against its config.json
        if "n_ctx" not in kw:  # no --context: a context as long as the sequence asked for
            kw["n_ctx"] = max(seq, default("n_ctx"))
        if seq > kw["n_ctx"]:
            raise InputError(f"--seq {seq} is longer than the context of {kw['n_ctx']} positions; "
                             f"use --seq {kw['n_ctx']} or less, or --context {seq}")
    return [UNK] * seq


UNTOKENIZED = 8  # the sequence planned for a checkpoint folder without tokenizer.json, when --seq is not given


def _untokenized(kw: dict) -> int | None:
    """For a checkpoint folder with no tokenizer.json (a config.json alone, as for counting a model's parameters),
    the length to plan when no input is given, said on stderr; None when the folder has its tokenizer."""
    from explain.checkpoints.open import open_checkpoint  # lazy: the readers load only for a checkpoint

    ck = kw["checkpoint"]
    kw["checkpoint"] = ck = open_checkpoint(ck) if isinstance(ck, str) else ck  # opened once, for plan() too
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
    parameter count is the model's (a tied unembedding is counted once). --weights is accepted so a 'run'
    command line works here too, but ignored: shapes come from the config, not from a file. The sizes are
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
    kw = run_kwargs(model, kwargs)
    use_trained(kw, kw.get("weights"), model)  # the sizes of the model 'explain run' opens: gpt's trained one
    if seq is None and kw.get("checkpoint") is not None and not {"text", "tokens", "embeddings"} & set(kw):
        seq = _untokenized(kw)  # a config.json alone (no tokenizer.json): shapes for a few tokens
    if seq is not None:
        kw["tokens"] = _seq_tokens(model, seq, kw, show_cost)
    if kw.pop("weights", None) is not None:
        click.echo("note: --weights is not read by 'explain shapes' (shapes come from the config); "
                   "'explain run … --weights FILE' checks the file against them", err=True)
    if not (show_steps or show_params) and not as_json:
        raise UsageError("--no-steps with --no-params leaves nothing to show; drop one of them")
    from explain.engine.api import plan  # lazy: engine not loaded for --help
    from explain.report.shape_report import (  # lazy: engine not loaded for --help
        select,
        shapes_doc,
        shapes_text,
    )

    trace = plan(model, **kw)
    sel = select(trace, match, show_steps, show_params)
    sections = None
    if show_cost:
        from explain.report.cost import cost, cost_doc, cost_lines  # lazy: only --cost

        stored, why = stored_type(kw)
        sections = cost(trace, stored=stored, stored_why=why, dtype=dtype, batch=batch_size,
                        cache=MODELS[model].generates)
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


def stored_type(kw: dict) -> tuple[str | None, str]:
    """The type the parameters are stored in, and where that is said: a checkpoint's config.json (torch_dtype,
    or transformers 5's dtype), a GGUF file's quantization, or explain's own float64 arrays."""
    ck = kw.get("checkpoint")
    if ck is None:
        return "float64", OWN
    if isinstance(ck, str):
        from explain.checkpoints.open import open_checkpoint  # lazy: the readers load only for a checkpoint

        ck = open_checkpoint(ck)
    config = ck.config
    name = config.get("torch_dtype") or config.get("dtype")
    if isinstance(name, str) and name in DTYPES:
        return name, "config.json's torch_dtype" if config.get("torch_dtype") else "config.json's dtype"
    if str(ck.path).endswith(".gguf"):
        return "GGUF", "quantized blocks; the file's size says their bytes"
    return None, ""
