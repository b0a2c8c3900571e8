"""Where the trained GPT that ships with explain lives: ``explain/checkpoints/trained/gpt-tiny``, a folder ``explain
train`` wrote (config.json, model.safetensors, tokenizer.json, explain_train.json), opened with numpy alone
(:mod:`explain.io.tensorfile`, :mod:`explain.checkpoints.wordlevel`). Made by the documented command::

    explain train gpt -o explain/checkpoints/trained/gpt-tiny

(the built-in corpus, the default settings and sizes; its curve is in explain_train.json). Nothing here imports
numpy: :func:`use_trained` and :func:`weights_label` serve ``explain.engine.api`` (plan runs without numpy).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explain.core.errors import UsageError
from explain.core.options import OPTIONS, flag
from explain.core.registry import able, quoted

if TYPE_CHECKING:
    from explain.checkpoints.protocol import Checkpoint
    from explain.core.registry import Model

SHIPPED = Path(__file__).resolve().parent / "gpt-tiny"
# Its sizes, explain train's defaults: small enough to train in minutes on two cores, two layers so that an
# induction head can form (it composes with a previous-token head of the layer before).
SIZES: dict[str, Any] = dict(d_model=64, n_heads=4, n_layers=2, d_ff=256, n_ctx=48)


# The model that opens the shipped weights when none are named (the rule in the README and --trained's help).
DEFAULT_TRAINED = "gpt"
# The options that size a model: any of them asks for a model of that size, so random weights.
SIZE_OPTIONS = tuple(o.name for o in OPTIONS if o.group == "config" and o.type == "int"
                     and o.name not in ("seed", "attention_tile"))  # the tile changes no weight
WHICH = "--random-weights, --weights, --checkpoint or a size option"


def use_trained(options: dict[str, Any], weights: Any = None, model: Model | None = None, draws: bool = False) -> None:
    """Decide which weights a run of ``model`` (its registry entry) shows, in ``options`` (a run's keyword arguments,
    edited in place): ``trained=True`` (--trained), or ``model`` gpt with none of --random-weights, --weights, --checkpoint or a
    size option, becomes the shipped folder as its checkpoint; ``random_weights`` is dropped (the seed then seeds
    the weights). A ``seed`` beside the trained weights seeds only the draws (``draws``: a generation) and is
    refused otherwise, since there is nothing random to seed."""
    trained = options.pop("trained", False)
    random = options.pop("random_weights", False)
    given = options.get("checkpoint") is not None or weights is not None
    if trained and model is not None and not model.can("trains"):
        # before the shipped folder becomes its --checkpoint, whose refusal would name a path never given
        raise UsageError(f"--trained opens the small trained {quoted(able('trains'))} that ships with explain; "
                         f"'{model.name}' has none: use {quoted(able('trains'))} with --trained, or drop --trained")
    if trained and random:
        raise UsageError("--trained and --random-weights ask for different weights; keep one")
    if random and given:
        raise UsageError("--random-weights initialises the weights from --seed; drop --checkpoint/--weights, or "
                         "drop --random-weights")
    if trained and options.get("checkpoint") is not None:
        raise UsageError("--trained opens the shipped model; drop --checkpoint, or drop --trained")
    # --trained --weights FILE: the shipped model's config and tokenizer, FILE's parameters ('explain params gpt')
    if options.get("checkpoint") is not None and options.get("seed") is not None and not draws:
        # as beside --trained: nothing random to seed (--weights keeps it: it seeds a loss-less model's target)
        raise UsageError("--seed seeds random weights, and --checkpoint gives trained ones; drop --seed (on "
                         "'explain generate' it seeds the draws)")
    sized = [o for o in SIZE_OPTIONS if options.get(o) is not None]
    if trained and sized:
        raise UsageError(f"--trained opens the shipped model, whose config sets every size; drop {flag(sized[0])} "
                         "or drop --trained (a size option alone asks for random weights)")
    shipped = model is not None and model.name == DEFAULT_TRAINED
    if not trained and (random or given or sized or not shipped or options.get("embeddings") is not None):
        return
    if options.get("seed") is not None and not draws:
        raise UsageError(f"--seed seeds random weights, and {model.name if model else 'the model'} opens the trained model; add "
                         "--random-weights to see random weights, or drop --seed")
    if draws:
        options.pop("seed", None)  # the draws' seed, already in the sampling settings
    options["checkpoint"] = str(SHIPPED)


def weights_label(checkpoint: Checkpoint | None, weights: Any, seed: int, has_weights: bool = True,
                  embeddings_given: bool = False) -> str:
    """Which weights a run shows, as its header says: "trained: gpt-tiny", "checkpoint: DIR", "weights: FILE",
    "weights: given" ("weights: FILE; tokenizer of trained gpt-tiny" beside a checkpoint), "random, seed N", or, for a model whose only parameters are its embeddings, "random
    embeddings, seed N" ("no weights; embeddings given" with --embeddings)."""
    given = None if weights is None else f"weights: {weights}" if isinstance(weights, (str, os.PathLike)) else \
        "weights: given"
    if checkpoint is not None:
        path = os.path.realpath(checkpoint.path)
        own = f"trained: {SHIPPED.name}" if path == os.path.realpath(SHIPPED) else f"checkpoint: {path}"
        # --checkpoint with --weights: the file's parameters, the checkpoint's tokenizer (and config)
        return own if given is None else f"{given}; tokenizer of {own.replace(': ', ' ', 1)}"
    if given is not None:
        return given
    if not has_weights:
        return "no weights; embeddings given" if embeddings_given else f"random embeddings, seed {seed}"
    return f"random, seed {seed}"
