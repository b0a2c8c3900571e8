"""The options every model-taking command shares, with the same names everywhere (``run``, ``params``,
``shapes``, ``export``): ``--text --target --tokens --embeddings --weights --checkpoint --seed --d-model --heads
--d-head --d-ff --layers --vocab --context --normalize``. Importing this module imports only click."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from explain.config import MODELS, check_model_name
from explain.errors import UsageError

_OPTIONS = [
    click.option("--text", "text", multiple=True, metavar="TEXT",
                 help="Input text (word-level tokenizer; with --checkpoint, its tokenizer.json). Repeat for a gpt batch."),
    click.option("--target", metavar="TEXT", help="Target text for the decoder of 'transformer'."),
    click.option("--tokens", metavar="IDS", help="Token ids instead of text, e.g. 3,1,4."),
    click.option("--embeddings", metavar="FILE", help="Input embeddings (.npy, .npz, .json, .csv), tokens × d_model."),
    click.option("--weights", metavar="FILE", help="Parameters from an .npz (see 'explain params')."),
    click.option("--checkpoint", metavar="DIR", help="A Hugging Face GPT-2 folder (config.json, model.safetensors)."),
    click.option("--seed", type=click.IntRange(min=0), help="Seed of the initial weights (default 0)."),
    click.option("--d-model", type=click.IntRange(min=1), help="Width of the residual stream / embeddings."),
    click.option("--heads", "n_heads", type=click.IntRange(min=1), help="Number of attention heads."),
    click.option("--d-head", type=click.IntRange(min=1), help="Width of each head (default d_model / heads)."),
    click.option("--d-ff", type=click.IntRange(min=1), help="Width of the feed-forward layer (default 4·d_model)."),
    click.option("--layers", "n_layers", type=click.IntRange(min=1), help="Number of blocks."),
    click.option("--vocab", "d_vocab", type=click.IntRange(min=1), help="Vocabulary size (default: what the input needs)."),
    click.option("--context", "n_ctx", type=click.IntRange(min=1), help="Context length (default 32)."),
    click.option("--normalize", type=click.Choice(["softmax", "sum"]),
                 help="'simple' only: softmax, or divide by the row sum."),
]


def model_options(f: Callable) -> Callable:
    """Decorate a command with the MODEL argument and the shared model options."""
    for opt in reversed(_OPTIONS):
        f = opt(f)
    return click.argument("model", metavar="MODEL")(f)


def run_kwargs(model: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The command's option values as keyword arguments of :func:`explain.api.run` (unset ones dropped);
    pops them from ``kwargs`` so the command keeps only its own options."""
    check_model_name(model)
    names = ["text", "target", "tokens", "embeddings", "weights", "checkpoint", "seed", "d_model", "n_heads",
             "d_head", "d_ff", "n_layers", "d_vocab", "n_ctx", "normalize"]
    out = {}
    for n in names:
        v = kwargs.pop(n, None)
        if v is None or v == ():
            continue
        out[n] = list(v) if n == "text" else v
    if "text" in out and len(out["text"]) == 1:
        out["text"] = out["text"][0]
    if "checkpoint" in out and model != "gpt":
        raise UsageError(f"--checkpoint loads a GPT-2 model; use 'gpt', not '{model}'")
    return out


MODEL_HELP = "MODEL is one of: " + ", ".join(MODELS) + "."
