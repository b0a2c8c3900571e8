"""What a run asks for, as one typed, frozen :class:`Request` made once at the edge (``explain.run``'s keywords, or
the CLI's options through them) and passed down: the model's registry entry (its name checked here, once), the
inputs, the config's options, where the weights come from (a checkpoint opened here, once; a weights file or
dict; or the seed), the backward pass and the generation. :mod:`explain.engine.request` checks the rest of it
against the inputs; :mod:`explain.engine.api` runs it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from explain.checkpoints.protocol import Checkpoint
from explain.checkpoints.trained import use_trained
from explain.core.errors import UsageError
from explain.core.options import OPTION
from explain.core.registry import Model, able, check_model_name, quoted
from explain.core.takes import check_model_takes, check_takes
from explain.engine.backward import Training, check_lr
from explain.engine.keywords import check_keywords
from explain.engine.weight_sizes import sizes_from_weights

if TYPE_CHECKING:
    from explain.core.sampling import Sampling

INPUTS = ("text", "target", "tokens", "embeddings")  # what a run reads, beside the config's options


@dataclass(frozen=True)
class Request:
    """One run's request. ``options`` are the config's (sizes, seed, switches: :func:`explain.core.config.make_config`'s
    keywords, unset ones absent), read-only; the inputs are as given (a list is a batch)."""

    model: Model  # the registry's entry: its name was checked when the request was made
    text: str | list[str] | None = None
    target: str | list[str] | None = None
    tokens: Any = None  # "3,1,4", a list of ids, or one such per sequence of a batch
    embeddings: Any = None  # a file name or a (T, d) / (batch, T, d) array
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    checkpoint: Checkpoint | None = None  # opened once, when the request is made
    weights: str | Mapping[str, Any] | None = None  # a .npz/.safetensors file or a dict of arrays
    training: Training | None = None  # the backward pass (and optimizer step) asked for, or None
    sampling: Sampling | None = None  # a generation's validated settings, or None
    tokenizer_steps: bool = False  # --tokenizer-steps: the tokenizer's walkthrough before the model's steps
    context: int | None = None  # a plan's context past a rotary checkpoint's (explain shapes --cost --seq N)

    @property
    def name(self) -> str:
        """The model's name, as the registry and the config spell it."""
        return self.model.name


def make_request(model: str, *, weights: Any = None, sampling: Any = None, shipped: bool = True,
                 command: str = "run", **options: Any) -> Request:
    """The request of ``explain.run(model, **options)``: the model's name checked (a one-line UsageError naming the
    nearest model), the weights decided (``shipped``: gpt opens the trained model unless told otherwise,
    :func:`explain.checkpoints.trained.use_trained`), a checkpoint path opened, and the backward options read.
    ``command`` (a name of :data:`explain.core.takes.COMMANDS`) refuses an option it cannot use, in one line."""
    check_keywords(model=model, weights=weights, sampling=sampling, **options)  # Python's types, before any is read
    check_takes(command, options)  # before the name: '--lr' on the lens is wrong whatever the model
    entry = check_model_name(model)
    check_model_takes(entry, options)  # --router softmax on gpt: the config sees only values unlike the default
    options = dict(options)
    if shipped:
        use_trained(options, weights, entry, draws=sampling is not None)  # gpt: the trained model unless told
    else:  # explain.plan: a shape-only plan of the model's own sizes, unless a checkpoint is given
        use_trained(options, weights)
    checkpoint = options.pop("checkpoint", None)
    if checkpoint is not None:
        checkpoint = open_for(entry, checkpoint)  # open once: the tokenizer, then the weights
    elif weights is not None:  # a weights file sets the sizes its shapes fix (a checkpoint's config sets them all)
        options = sizes_from_weights(entry, weights, options)
    training = training_of(options)
    steps = bool(options.pop("tokenizer_steps", False))
    inputs = {k: options.pop(k, None) for k in INPUTS}
    return Request(entry, **inputs, options=MappingProxyType(options), checkpoint=checkpoint, weights=weights,
                   training=training, sampling=sampling, tokenizer_steps=steps)


def open_for(entry: Model, checkpoint: str | os.PathLike | Checkpoint) -> Checkpoint:
    """A checkpoint from a folder path (or one already opened), once ``entry`` is a model that loads checkpoints:
    refused before the folder is read; refused too when it holds another model."""
    if not entry.uses("checkpoint"):
        raise UsageError(f"--checkpoint loads a pretrained model; use {quoted(able('checkpoint'))}, not '{entry.name}'")
    if isinstance(checkpoint, (str, os.PathLike)):
        from explain.checkpoints.open import open_checkpoint  # lazy: the readers only with --checkpoint

        checkpoint = open_checkpoint(str(checkpoint))
    if checkpoint.model != entry.name:
        raise UsageError(f"checkpoint '{checkpoint.path}' holds a '{checkpoint.model}' model, not a '{entry.name}'; "
                         f"give the model name {checkpoint.model} (or leave it out)")  # any command: run, generate, …
    return checkpoint


def training_of(options: dict[str, Any]) -> Any:
    """Pop the backward options (``backward``, ``output_target``, ``grad_output``, ``lr``) from ``options``: a
    :class:`explain.engine.backward.Training`, or None for a forward-only run. A learning rate implies backward."""
    wanted = options.pop("backward", False)
    given = {k: options.pop(k, None) for k in ("output_target", "grad_output", "lr")}
    optimizer = options.pop("optimizer", None)
    if optimizer is not None and optimizer not in OPTION["optimizer"].choices:
        raise UsageError(f"--optimizer must be one of {', '.join(OPTION['optimizer'].choices)}, got {optimizer!r}")
    if optimizer is not None and given["lr"] is None:
        raise UsageError(f"--optimizer {optimizer} takes one step with a learning rate; add --lr RATE (e.g. --lr "
                         "0.001)")
    if not wanted and all(v is None for v in given.values()):
        return None

    if not wanted and given["lr"] is None:
        raise UsageError("--output-target and --grad-output choose the objective of the backward pass; add "
                         "--backward")
    if given["lr"] is not None:
        given["lr"] = check_lr(given["lr"])
    return Training(**given, optimizer=optimizer or "sgd")


__all__ = ["Request", "make_request", "open_for", "training_of", "INPUTS"]
