"""``explain generate MODEL``: run the prompt, then append new tokens one at a time (the TUI, ``--plain`` or
``--json``); each new token is a group of recorded steps, ``gen.N.…``."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.commands.run import check_outputs, check_pick, pick_options, save_options, saving, show
from explain.core.errors import UsageError
from explain.core.names import gen_step
from explain.core.registry import able, quoted
from explain.core.served import interactive

PROMPT_HELP = ("Prompt text (word-level tokenizer; with --checkpoint, its tokenizer.json). Repeat for a batch of "
               "prompts with the same number of tokens (a generation pads none).")
TOKENS_HELP = ("Token ids instead of text, e.g. 3,1,4. Repeat for a batch of prompts of the same length (a generation "
               "pads none).")


@click.command(epilog=MODEL_HELP + f" Generation needs {quoted(able('generates'))}.")
@lambda f: model_options(f, {"text": PROMPT_HELP, "tokens": TOKENS_HELP})
@click.option("--plain", is_flag=True, help="Print every step, then the generated text, instead of the TUI.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document: every step, the new tokens, "
              "the predictions.")
@click.option("--precision", type=click.IntRange(0, 12), default=4, show_default=True, help="Digits after the point.")
@save_options
@pick_options
@click.option("--new-attention", is_flag=True, help="Show each new token's attention row over the text so far (one "
              "layer and head, a matrix that grows by a row and a column per token) instead of every step.")
@click.option("--layer", type=int, help="With --new-attention: the layer (default −1, the last).")
@click.option("--head", type=int, help="With --new-attention: the head (default 0).")
def generate(model: str, max_new_tokens: int | None, temperature: float | None, top_k: int | None, top_p: float | None,
             greedy: bool, ignore_eos: bool, plain: bool, as_json: bool, precision: int, save: str | None,
             force: bool, match: str | None, slice_: str | None, cell: str | None, new_attention: bool,
             layer: int | None, head: int | None, **kwargs) -> None:
    """Append new tokens after the input, one at a time, and step through how each was chosen.

    Each new token is a group of steps: the forward pass of its one new position on the key/value cache, the
    logits, ÷ temperature, the top-k and top-p filters, softmax and the draw (greedy, or a seeded uniform
    number u and the cumulative probabilities it falls between). --seed seeds only the draws: the same seed
    gives the same text. gpt opens the trained model that ships with explain unless --random-weights,
    --weights, --checkpoint or a size option is given (random weights are then seed 0's).

    \b
    Examples:
      explain generate gpt --checkpoint DIR --text "The cat" --max-new-tokens 5 --top-k 3
      explain generate gpt --trained --text "the cat sat on the" --greedy --plain
      explain generate gpt --trained --text "the cat is" --temperature 0.7 --top-p 0.9 --seed 1 --json > gen.json
      explain generate gpt --trained --text "the cat sat on the" --greedy --new-attention --layer 1 --head 2 --plain
    """
    check_outputs(plain, as_json, save, force)
    check_pick(plain, as_json, match, slice_, cell)
    check_new_attention(new_attention, layer, head, save, match, slice_, cell)
    from explain.core.sampling import (
        make_sampling,  # lazy: a command loads the engine when it runs, not for --help (bench_check_startup)
    )
    from explain.engine.api import (
        generate as run_generate,  # lazy: a command loads the engine when it runs, not for --help (bench_check_startup)
    )

    options = run_kwargs(model, kwargs)
    sampling = make_sampling(max_new_tokens, temperature, top_k, top_p, greedy, options.get("seed"))
    if sampling.greedy and options.get("seed") is not None:  # as --greedy refuses --temperature and the filters
        # (here, not in make_sampling: a tutorial's [options] seed seeds its weights too, greedy or not)
        raise UsageError("greedy decoding draws nothing at random, so --seed would have no effect (on generate it "
                         "seeds only the draws; random weights are seed 0's); drop --seed, or sample instead")
    for note in sampling.notes:
        click.echo(f"note: {note}", err=True)
    with saving(save, force) as stream:  # --save FILE.npz: written while the run records, removed if it fails
        trace = run_generate(model, sampling=sampling, ignore_eos=ignore_eos, on_tensor=stream and stream.add,
                             **options)  # validated once, above
        vocab = trace.config.d_vocab
        if top_k is not None and vocab and top_k >= vocab:
            click.echo(f"note: --top-k {top_k} keeps every token (the vocabulary has {vocab}): the filter changes "
                       "nothing; use a smaller k", err=True)
        assert trace.generation is not None
        if new_attention:  # never with --save (check_new_attention)
            show_new_attention(trace, options, -1 if layer is None else layer, head or 0, plain, as_json, precision)
            return
        # the re-run form and G keep generating with these settings; the TUI opens on the generation's first step
        show(trace, {**options, "sampling": trace.generation.sampling}, plain=plain, as_json=as_json,
             precision=precision, save=save, force=force, start=gen_step(0, "next_logits"), match=match,
             slice_=slice_, cell=cell, stream=stream)


def check_new_attention(new_attention: bool, layer: int | None, head: int | None, save: str | None,
                        match: str | None, slice_: str | None, cell: str | None) -> None:
    """--layer and --head only with --new-attention, which shows one view: refused before the run, in one line."""
    if not new_attention:
        if layer is not None or head is not None:
            raise UsageError("--layer and --head choose the view of --new-attention; add --new-attention")
        return
    clash = [flag for flag, v in (("--save", save), ("--match", match), ("--slice", slice_), ("--cell", cell))
             if v is not None]
    if clash:
        does = "writes every step" if clash[0] == "--save" else "picks steps of the whole run"
        raise UsageError(f"--new-attention shows one view, {clash[0]} {does}; drop one of them")


def show_new_attention(trace: Any, options: dict, layer: int, head: int, plain: bool, as_json: bool,
                       precision: int) -> None:
    """The attention to generated tokens as a table (--plain, or off a terminal), one JSON document (--json), or
    the TUI on the last row's step (W there opens the view)."""
    from explain.interp.generated import generated_attention  # lazy: a command loads the engine when it runs
    from explain.render.predictions import text_so_far  # lazy: rich out of the core

    att = generated_attention(trace, layer, head)  # a layer or head the run has not: one line
    text = text_so_far(trace, trace.steps[-1].index)  # the prompt ▸ the new tokens
    if as_json:
        json.dump({**att.to_dict(), "text": text.plain.removeprefix("text so far: ") if text else ""}, sys.stdout,
                  ensure_ascii=False)
        sys.stdout.write("\n")
    elif plain or not interactive():
        from rich.console import Console  # lazy: rich out of the core

        from explain.render.generated import generated_table  # lazy: rich out of the core

        console = Console()
        console.print(generated_table(att, min(precision, 4)))
        console.print(text)
    else:
        from explain.tui import open_trace  # lazy: textual only with the TUI

        open_trace(trace, options={**options, "sampling": trace.generation.sampling}, start=att.steps[-1])
