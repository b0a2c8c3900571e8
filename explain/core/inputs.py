"""What a model reads besides its weights: the :class:`Inputs` value (token ids, labels, given embeddings,
padding), and :func:`parse_token_ids` for ``--tokens``. No numpy: shape-only runs carry plain lists."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

from explain.core.errors import UsageError


@dataclass
class Inputs:
    """Everything a model reads besides its weights. Token ids are plain lists (shape-only runs need no
    numpy); ``embeddings`` is a numpy array when given."""

    ids: list[list[int]] | None = None  # (batch, T) source token ids, right-padded when lengths differ
    tokens: list[str] = field(default_factory=list)  # labels of the source positions (the first batch item)
    batch_tokens: list[list[str]] = field(default_factory=list)  # every batch item's labels, <pad> included
    embeddings: Any = None  # (T, d) or (batch, T, d) given embeddings, replacing the token embedding
    target_ids: list[list[int]] | None = None  # transformer: decoder input, <bos> + target, per text
    target_tokens: list[str] = field(default_factory=list)
    label_ids: list[list[int]] | None = None  # transformer: what the decoder must predict, target + <eos>
    vocab: list[str] = field(default_factory=list)
    n_vocab_needed: int = 0
    lengths: list[int] | None = None  # real lengths of a padded source batch (None: no padding)
    target_lengths: list[int] | None = None  # real lengths of a padded decoder batch
    pad_id: int | None = None  # the id the padding uses (<pad>; a checkpoint's eos)
    batch_target_tokens: list[list[str]] = field(default_factory=list)  # every item's decoder labels

    @property
    def seq_len(self) -> int:
        if self.embeddings is not None:
            return int(self.embeddings.shape[-2])
        return len(self.ids[0]) if self.ids else 0

    @property
    def batch(self) -> int:
        if self.embeddings is not None:
            return int(self.embeddings.shape[0]) if self.embeddings.ndim == 3 else 1
        return len(self.ids) if self.ids else 1

    @property
    def batched(self) -> bool:
        """Whether the run carries a batch axis first: several texts, or (batch, T, d) embeddings (a model
        whose registry entry is ``batched``, gpt, always has one)."""
        if self.embeddings is not None:
            return self.embeddings.ndim == 3
        return self.batch > 1


def token_specs(tokens: Any) -> list[str] | None:
    """``--tokens`` as given, one ``"3,1,4"`` per sequence: a string (one sequence), several strings (the flag
    repeated: a batch), or from Python a list of ids or a list of such lists. None when not given."""
    if tokens is None:
        return None
    if isinstance(tokens, str):
        return [tokens]
    items = list(tokens)
    if items and all(isinstance(t, numbers.Integral) and not isinstance(t, bool) for t in items):  # numpy's too
        return [",".join(str(int(t)) for t in items)]
    return [t if isinstance(t, str) else ",".join(str(int(i)) for i in t) for t in items] or [""]


def parse_token_ids(spec: str) -> list[int]:
    """``"3,1,4"`` → [3, 1, 4], or a UsageError naming the bad part."""
    out = []
    for part in spec.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()) or len(part) > 12:  # '²'.isdigit(); ids are below 10⁷
            raise UsageError(f"--tokens takes whole numbers separated by commas (e.g. 3,1,4); '{part}' is not one")
        out.append(int(part))
    if not out:
        raise UsageError("--tokens is empty; give ids such as 3,1,4")
    return out
