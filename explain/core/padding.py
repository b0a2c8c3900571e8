"""Batches of texts of different lengths: right-padding, the padding mask and the ignored loss targets.

The conventions are Hugging Face's and PyTorch's, so a run can be checked against them:

- texts are padded on the right with a ``<pad>`` token up to the longest text of the batch (as a tokenizer
  with ``padding_side="right"`` does for GPT-2 training); the real tokens keep positions 0 … n−1;
- the padding mask hides the *keys* that are ``<pad>`` (``nn.MultiheadAttention``'s ``key_padding_mask``,
  ``True`` where a key is padding); a padded query still attends to the real keys before it, and its output
  is simply never used;
- a loss target that is padding becomes ``IGNORE_INDEX`` (−100, the default ``ignore_index`` of
  ``F.cross_entropy``), and the loss is the mean over the targets that are not ignored.

Pure Python (no numpy), so the shape CLI can plan a padded batch at click's speed.
"""

from __future__ import annotations

from collections.abc import Sequence

PAD = "<pad>"
IGNORE_INDEX = -100  # torch.nn.functional.cross_entropy's default ignore_index


def needs_padding(batch: Sequence[Sequence[int]]) -> bool:
    """True when the sequences of a batch do not all have the same length."""
    return len({len(ids) for ids in batch}) > 1


def pad_right(batch: Sequence[Sequence[int]], pad_id: int, length: int | None = None) -> list[list[int]]:
    """Each sequence followed by ``pad_id`` up to ``length`` (default: the longest of the batch)."""
    n = max(len(ids) for ids in batch) if length is None else length
    return [list(ids) + [pad_id] * (n - len(ids)) for ids in batch]


def key_padding_mask(lengths: Sequence[int], length: int) -> list[list[bool]]:
    """(batch, length): True where position j of sequence b is padding (j ≥ lengths[b]), as torch's
    ``key_padding_mask``."""
    return [[j >= n for j in range(length)] for n in lengths]


def ignore_padding(labels: Sequence[Sequence[int]], lengths: Sequence[int]) -> list[list[int]]:
    """Labels with every position at or after its sequence's real length set to ``IGNORE_INDEX``."""
    return [[y if t < n else IGNORE_INDEX for t, y in enumerate(row)] for row, n in zip(labels, lengths)]


def pad_labels(tokens: Sequence[str], length: int, pad: str = PAD) -> list[str]:
    """Position labels of one padded sequence: its tokens, then ``pad``, the word of the id the padding uses
    (``<pad>``; a checkpoint pads with its own token, the trained GPT with ``<eos>``)."""
    return list(tokens) + [pad] * (length - len(tokens))
