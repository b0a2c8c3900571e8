"""Where the trained GPT that ships with explain lives: ``explain/trained/gpt-tiny``, a folder ``explain
train`` wrote (config.json, model.safetensors, tokenizer.json, explain_train.json), opened with numpy alone
(:mod:`explain.tensorfile`, :mod:`explain.wordlevel`). Made by the documented command::

    explain train gpt -o explain/trained/gpt-tiny

(the built-in corpus, the default settings and sizes; its curve is in explain_train.json). Nothing here imports
numpy: :func:`use_trained` and :func:`weights_label` serve ``explain.api`` (plan runs without numpy).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from explain.errors import UsageError

SHIPPED = Path(__file__).resolve().parent / "gpt-tiny"
# Its sizes, explain train's defaults: small enough to train in minutes on two cores, two layers so that an
# induction head can form (it composes with a previous-token head of the layer before).
SIZES: dict[str, Any] = dict(d_model=64, n_heads=4, n_layers=2, d_ff=256, n_ctx=48)


def use_trained(options: dict[str, Any], weights: Any = None) -> None:
    """``trained=True`` (--trained) in a run's options becomes the shipped folder as its checkpoint."""
    if not options.pop("trained", False):
        return
    if options.get("checkpoint") is not None or weights is not None:
        raise UsageError("--trained opens the shipped model's weights; drop --checkpoint/--weights, or drop --trained")
    options["checkpoint"] = str(SHIPPED)


def weights_label(checkpoint: Any, weights: Any, seed: int, has_weights: bool = True) -> str:
    """Which weights a run shows, as its header says: "trained: gpt-tiny", "checkpoint: DIR", "weights: FILE",
    "weights: given", "random, seed N", or "random embeddings, seed N" (a model whose only parameters are its embeddings)."""
    if checkpoint is not None:
        path = os.path.realpath(str(getattr(checkpoint, "path", checkpoint)))
        return f"trained: {SHIPPED.name}" if path == os.path.realpath(SHIPPED) else f"checkpoint: {path}"
    if weights is not None:
        return f"weights: {weights}" if isinstance(weights, (str, os.PathLike)) else "weights: given"
    return f"random, seed {seed}" if has_weights else f"random embeddings, seed {seed}"
