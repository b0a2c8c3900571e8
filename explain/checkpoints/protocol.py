"""What every checkpoint reader gives (:class:`Checkpoint`), so that the engine reads any of them the same way and
never asks an object what it happens to have: GPT-2 and the trained GPT (:mod:`explain.checkpoints.gpt2`), the Llama
family with its mixtures of experts and latent attention (:mod:`~explain.checkpoints.llama`,
:mod:`~explain.checkpoints.moe`, :mod:`~explain.checkpoints.latent`), Gemma (:mod:`~explain.checkpoints.gemma`),
BERT (:mod:`~explain.checkpoints.bert`) and GGUF files (:mod:`~explain.checkpoints.gguf`,
:mod:`~explain.checkpoints.gguf_gemma`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from explain.ops.base import CellExplanation
    from explain.trace.origin import WeightOrigins

# A weight's cell → how its float was rebuilt from the file (a GGUF block's scale, offset and stored integer).
WeightOrigin = Callable[[str, tuple[int, ...]], "CellExplanation"]


@runtime_checkable
class Checkpoint(Protocol):
    """A checkpoint opened by :func:`explain.checkpoints.open.open_checkpoint`: its config, its parameters under the
    registry's names, its tokenizer, where each weight came from, and the words it did not know."""

    model: str  # the registry's model that runs it (gpt, llama, gemma, bert)
    name: str  # what refusals call it: "checkpoint", or "trained model"
    path: Path  # the folder or file it was read from
    context_what: str  # how a refusal names its context ("the checkpoint's context")
    config: dict[str, Any]  # its config.json as read (a GGUF's: the keys a run asks of it, such as eos_token_id)
    options: dict[str, Any]  # that config as the engine's options (d_model, n_heads, …)
    tokenizer_path: Path | None  # its tokenizer.json, if it has one
    unknown: Sequence[str]  # the words of the last text encoded that became <unk> (a word-level tokenizer's)
    weight_origin: WeightOrigin | None  # how a weight's cell was rebuilt from the file; None: stored as read

    def params(self) -> dict[str, Any]:
        """Every parameter under the registry's names, float64, read once."""
        ...

    def weight_origins(self, names: Iterable[str]) -> WeightOrigins | None:
        """Where each parameter of ``names`` came from in the file, as data a run's trace keeps (None: the floats
        are stored as read)."""
        ...

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` from the checkpoint's own tokenizer."""
        ...

    def label(self, token_id: int) -> str:
        """A readable label for one token id."""
        ...

    def labels(self, text: str, ids: list[int]) -> list[str]:
        """The labels of the ids ``text`` was encoded to."""
        ...

    def vocab_labels(self) -> Sequence[str]:
        """One label per row of the embedding."""
        ...

    def pad_id(self) -> int:
        """The id a batch is right-padded with."""
        ...


__all__ = ["Checkpoint", "WeightOrigin"]
