"""What a run is given: text through a tokenizer, token ids, or embeddings from a file; one pipeline,
:func:`prepare`, for every model and both tokenizers.

Any object with the :class:`TextTokenizer` methods can tokenize: the word-level :class:`Tokenizer` here, or a
GPT-2 checkpoint's byte-level BPE (:class:`explain.checkpoint.Checkpoint`). The word-level tokenizer is
deliberately tiny and readable: words and punctuation, case-insensitive ids, a built-in
vocabulary (the words of the tutorials) extended by the words of the input, and the specials ``<bos>``,
``<eos>``, ``<unk>``. Tokenizing needs no numpy, so ``explain shapes --text …`` stays fast; loading an
embeddings file does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from explain.array_files import file_kind, read_embeddings
from explain.errors import InputError, UsageError
from explain.limits import MAX_ABS_VALUE
from explain.options import OPTION
from explain.padding import PAD, ignore_padding, needs_padding, pad_labels, pad_right
from explain.registry import MODELS, quoted, users

SPECIALS = ["<bos>", "<eos>", "<unk>"]
BOS, EOS, UNK = 0, 1, 2

# The words of the shipped tutorials and a few common ones, so small runs share stable ids.
BUILTIN_WORDS = (
    "the a an is are was of to and in on at for with your my journey starts one step thinking machines "
    "cat dog mat sat happy hungry nice woman man it this that i you we they . , ! ?"
).split()

_WORD = re.compile(r"[A-Za-z0-9_']+|[^\sA-Za-z0-9_']")


def split_words(text: str) -> list[str]:
    """Words and punctuation marks, in order: ``"The cat!"`` → ["The", "cat", "!"]."""
    return _WORD.findall(text)


class TextTokenizer(Protocol):
    """What the input pipeline needs of a tokenizer."""

    name: str  # how messages name it: "tokenizer", "checkpoint"
    fixed: bool  # a fixed vocabulary (token ids past it are refused) or one that grows with the input

    def encode(self, text: str) -> list[int]: ...

    def label(self, token_id: int) -> str: ...

    def labels(self, text: str, ids: list[int]) -> list[str]:
        """The labels of the positions of an encoded text (the ruler the TUI shows)."""
        ...

    def vocab_labels(self) -> list[str]: ...

    def pad_id(self) -> int:
        """The id a batch of texts of different lengths is right-padded with."""
        ...

    def __len__(self) -> int: ...


class Tokenizer:
    """A word-level tokenizer: specials, then the built-in words, then new words in order of appearance."""

    name = "tokenizer"
    fixed = False

    def __init__(self, extra_texts: list[str] = ()) -> None:
        self.words: list[str] = list(SPECIALS)
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        for w in BUILTIN_WORDS:
            self._add(w)
        for text in extra_texts:
            for w in split_words(text):
                self._add(w.lower())

    def _add(self, word: str) -> None:
        if word not in self.index:
            self.index[word] = len(self.words)
            self.words.append(word)

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str) -> list[int]:
        return [self.index.get(w.lower(), UNK) for w in split_words(text)]

    def label(self, token_id: int) -> str:
        return self.words[token_id] if 0 <= token_id < len(self.words) else f"#{token_id}"

    def labels(self, text: str, ids: list[int]) -> list[str]:
        return split_words(text)  # as written (the ids are case-insensitive)

    def vocab_labels(self) -> list[str]:
        return list(self.words)

    def pad_id(self) -> int:
        """The id of ``<pad>``, added to the vocabulary (after every word) the first time a batch needs it."""
        self._add(PAD)
        return self.index[PAD]


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


def check_embeddings(arr: Any, source: str = "the embeddings") -> Any:
    """A float64 (T, d) array, or a batch (batch, T, d), or an InputError naming the problem."""
    import numpy as np  # lazy: numpy off the shape path

    arr = np.asarray(arr)
    if arr.dtype.kind not in "fiu" or arr.ndim not in (2, 3):
        raise InputError(f"{source} must be a numeric array of tokens × d_model (or batch × tokens × d_model), "
                         f"got shape {list(arr.shape)} of {arr.dtype}")
    arr = arr.astype(np.float64)
    if 0 in arr.shape:
        raise InputError(f"{source} are empty (shape {list(arr.shape)}); give at least one row and column")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{source} contain NaN or infinite values; replace them with numbers")

    if np.abs(arr).max() > MAX_ABS_VALUE:
        raise InputError(f"{source} hold values as large as {np.abs(arr).max():.3g}; the run squares and sums "
                         f"them, which overflows float64 above about {MAX_ABS_VALUE:.0e}: scale them down")
    return arr


def numpy_file_kind(path: Path) -> str:
    """'npy', 'npz', 'pickle' or 'other', from the file's first bytes (see :func:`explain.array_files.file_kind`)."""
    return file_kind(path)


def load_embeddings(path: str, what: str = "embeddings") -> Any:
    """A 2-D float array (T, d) from .npy, .npz (one array, or one called 'embeddings'), .json or .csv, read
    by :mod:`explain.readers` (declared sizes checked first, pickles refused) and checked here; ``what`` names
    the array in messages (the embeddings, or a gradient/target given for the backward pass)."""
    return check_embeddings(read_embeddings(path, what), f"the {what} in '{path}'")


def prepare(model: str, texts: list[str], target: str | list[str] | None, tokens: str | None,
            embeddings: Any = None, tokenizer: TextTokenizer | None = None) -> Inputs:
    """Tokenize or load the inputs of a run (before the config knows d_vocab), with ``tokenizer`` (a
    checkpoint's) or the word-level tokenizer over the texts. Several texts make a batch; texts of different
    lengths are right-padded (see :mod:`explain.padding`)."""
    if tokens is not None and not tokens.strip():
        raise UsageError("--tokens is empty; give ids such as 3,1,4, or drop --tokens")
    if tokens and texts:
        raise UsageError("give either --text or --tokens, not both")
    if tokens and embeddings is not None:
        raise UsageError("give either --embeddings or --tokens, not both: both set the input")
    entry = MODELS[model]
    targets = [target] if isinstance(target, str) else list(target or [])
    if targets and not entry.uses("target"):
        raise UsageError(f"--target is for the {quoted(users(OPTION['target']))} model (the decoder's text); "
                         f"'{model}' has no decoder")
    inp = Inputs()
    tok = tokenizer or Tokenizer(list(texts) + targets)
    if embeddings is not None:
        # a path (CLI) or an array (Python, tutorials with inline embeddings)
        inp.embeddings = load_embeddings(embeddings) if isinstance(embeddings, (str, Path)) \
            else check_embeddings(embeddings)
        n = inp.embeddings.shape[-2]
        if len(texts) > 1:
            raise UsageError("give one --text with --embeddings (its words label the rows); a batch of "
                             "embeddings is one (batch, tokens, d_model) array")
        words = split_words(texts[0]) if texts else []
        if words and len(words) != n:
            raise InputError(f"--text has {len(words)} words but the embeddings have {n} rows; "
                             "give one word per row (the words only label the rows)")
        inp.tokens = words or [f"x{i + 1}" for i in range(n)]
        if not entry.uses("embeddings"):
            raise UsageError(f"'{model}' reads token ids (its loss needs them); use --text or --tokens, not --embeddings")
    elif tokens:
        ids = parse_token_ids(tokens)
        inp.ids = [ids]
        inp.tokens = [tok.label(i) for i in ids]
    else:
        batch = [tok.encode(t) for t in texts]
        for t, ids in zip(texts, batch):
            if not ids:
                raise InputError(f"--text '{t}' has no {'words' if not tok.fixed else 'tokens'}; give some text")
        inp.ids = batch
        if needs_padding(batch):
            inp.pad_id, inp.lengths = tok.pad_id(), [len(b) for b in batch]
            inp.ids = pad_right(batch, inp.pad_id)
        inp.batch_tokens = [pad_labels(tok.labels(t, b), len(inp.ids[0])) for t, b in zip(texts, batch)]
        inp.tokens = inp.batch_tokens[0]
    if entry.uses("target"):
        _prepare_targets(inp, tok, targets)
    inp.vocab = tok.vocab_labels()
    if tok.fixed:  # a checkpoint's vocabulary: its size is the model's
        for i in (i for b in (inp.ids or []) for i in b):
            if not 0 <= i < len(tok):
                raise InputError(f"token id {i} is outside the {tok.name}'s vocabulary of {len(tok)}")
    inp.n_vocab_needed = len(tok)  # a token id beyond the vocabulary is an error (explain.api), never a resize
    return inp


def _prepare_targets(inp: Inputs, tok: TextTokenizer, targets: list[str]) -> None:
    """The decoder's inputs (<bos> + target) and labels (target + <eos>), one per source text, padded alike."""
    n = inp.batch
    targets = targets or [""]
    if len(targets) == 1 and n > 1:
        targets = targets * n  # one target for every text of the batch
    if len(targets) != n:
        raise UsageError(f"give one --target per --text ({n} texts, {len(targets)} targets), or a single --target")
    enc = [tok.encode(t) for t in targets]
    inp.target_ids = [[BOS] + ids for ids in enc]
    inp.label_ids = [ids + [EOS] for ids in enc]
    inp.target_tokens = ["<bos>"] + split_words(targets[0])
    width = max(len(t) for t in inp.target_ids)
    inp.batch_target_tokens = [pad_labels(["<bos>"] + split_words(t), width) for t in targets]
    if needs_padding(inp.target_ids):
        inp.pad_id = tok.pad_id() if inp.pad_id is None else inp.pad_id
        inp.target_lengths = [len(t) for t in inp.target_ids]
        inp.target_ids = pad_right(inp.target_ids, inp.pad_id)
        inp.label_ids = ignore_padding(pad_right(inp.label_ids, inp.pad_id), inp.target_lengths)
        inp.target_tokens = pad_labels(inp.target_tokens, width)
