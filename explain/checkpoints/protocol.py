"""What every tokenizer of a run gives (:class:`TextTokenizer`: explain's word-level one in
:mod:`explain.core.words`, and every checkpoint), and what every checkpoint reader gives (:class:`Checkpoint`, a
tokenizer too), so that the engine, the interpretability tools and ``explain tokenize`` read any of them the same
way and never ask an object what it happens to have: GPT-2 and the trained GPT (:mod:`explain.checkpoints.gpt2`), the Llama
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
class TextTokenizer(Protocol):
    """A run's tokenizer: explain's word-level one (:class:`explain.core.words.Tokenizer`, its vocabulary grown by
    the run's texts) or a checkpoint's (fixed: the embedding's rows)."""

    name: str  # how messages name it: "tokenizer", "checkpoint", "trained model"
    fixed: bool  # a fixed vocabulary (token ids past it are refused) or one that grows with the input
    unknown: Sequence[str]  # the words of the last text encoded that became <unk> (a word-level vocabulary's)

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``."""
        ...

    def label(self, token_id: int) -> str:
        """A readable label for one token id."""
        ...

    def labels(self, text: str, ids: list[int]) -> list[str]:
        """The labels of the positions of an encoded text (the ruler the TUI shows)."""
        ...

    def vocab_labels(self) -> Sequence[str]:
        """One label per id of the vocabulary (a checkpoint's: per row of the embedding)."""
        ...

    def pad_id(self) -> int:
        """The id a batch of texts of different lengths is right-padded with."""
        ...

    def __len__(self) -> int:
        """The vocabulary's size."""
        ...


@runtime_checkable
class Checkpoint(TextTokenizer, Protocol):
    """A checkpoint opened by :func:`explain.checkpoints.open.open_checkpoint`: its config, its parameters under the
    registry's names, its tokenizer (it is one, and says what ``explain tokenize`` walks through), where each weight
    came from, and the words it did not know."""

    model: str  # the registry's model that runs it (gpt, llama, gemma, bert)
    path: Path  # the folder or file it was read from
    context_what: str  # how a refusal names its context ("the checkpoint's context")
    config: dict[str, Any]  # its config.json as read (a GGUF's: the keys a run asks of it, such as eos_token_id)
    options: dict[str, Any]  # that config as the engine's options (d_model, n_heads, …)
    tokenizer_path: Path | None  # its tokenizer.json, if it has one
    weight_origin: WeightOrigin | None  # how a weight's cell was rebuilt from the file; None: stored as read
    special_tokens: bool  # whether encoding adds the special tokens tokenizer.json's post-processor names (BERT's)

    def params(self) -> dict[str, Any]:
        """Every parameter under the registry's names, float64, read once."""
        ...

    def weight_origins(self, names: Iterable[str]) -> WeightOrigins | None:
        """Where each parameter of ``names`` came from in the file, as data a run's trace keeps (None: the floats
        are stored as read)."""
        ...

    def bos(self) -> int | None:
        """The id its encode puts before every text (Gemma's <bos>), or None."""
        ...

    def tokenizer_json(self) -> Any:
        """Its tokenizer.json, parsed; None when it has none (a GGUF keeps its tokenizer in its fields)."""
        ...

    def word_vocab(self) -> dict[str, int] | None:
        """The word → id vocabulary of a word-level tokenizer.json ``explain train`` wrote, else None."""
        ...

    def tokenizer_fields(self) -> tuple[Any, str, list[str], list[str]] | None:
        """A GGUF's tokenizer as stored (tokenizer.ggml.model, .pre, .tokens, .merges); None for a folder."""
        ...

    def sentencepiece_json(self, text: str) -> dict[str, Any] | None:
        """A GGUF's SentencePiece vocabulary as a tokenizer.json document for the characters of ``text``; None for
        any other tokenizer."""
        ...


__all__ = ["Checkpoint", "TextTokenizer", "WeightOrigin"]
