"""What a run is given, prepared: text through a tokenizer, token ids, or embeddings from a file; one pipeline,
:func:`prepare`, for every model and both tokenizers.

Any :class:`~explain.checkpoints.protocol.TextTokenizer` can tokenize: the word-level
:class:`~explain.core.words.Tokenizer` (words and punctuation, case-insensitive ids, a built-in vocabulary
extended by the words of the input, the specials ``<bos>``, ``<eos>``, ``<unk>``), or a checkpoint's own
(:class:`explain.checkpoints.protocol.Checkpoint`: GPT-2's byte-level BPE, …). Tokenizing needs no numpy, so ``explain shapes --text
…`` stays fast; loading an embeddings file does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explain.checkpoints.protocol import TextTokenizer
from explain.core.errors import InputError, UsageError
from explain.core.inputs import Inputs, parse_token_ids
from explain.core.limits import MAX_ABS_VALUE
from explain.core.options import OPTION
from explain.core.padding import PAD, ignore_padding, needs_padding, pad_labels, pad_right
from explain.core.registry import Model, quoted, users
from explain.core.words import BOS, EOS, Tokenizer, split_words


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
    """'npy', 'npz', 'pickle' or 'other', from the file's first bytes (see :func:`explain.io.array_files.file_kind`)."""
    from explain.io.array_files import file_kind  # lazy: zipfile and the array readers only for a file of arrays

    return file_kind(path)


def load_embeddings(path: str, what: str = "embeddings") -> Any:
    """A 2-D float array (T, d) from .npy, .npz (one array, or one called 'embeddings'), .json or .csv, read
    by :mod:`explain.io.readers` (declared sizes checked first, pickles refused) and checked here; ``what`` names
    the array in messages (the embeddings, or a gradient/target given for the backward pass)."""
    from explain.io.array_files import read_embeddings  # lazy: zipfile and the array readers only for a file of arrays

    return check_embeddings(read_embeddings(path, what), f"the {what} in '{path}'")


def prepare(entry: Model, texts: list[str], target: str | list[str] | None, tokens: str | list[str] | None,
            embeddings: Any = None, tokenizer: TextTokenizer | None = None, defaulted: bool = False) -> Inputs:
    """Tokenize or load the inputs of a run of ``entry`` (the model's registry entry; before the config knows
    d_vocab), with ``tokenizer`` (a checkpoint's) or the word-level tokenizer over the texts. Several texts (or
    ``tokens``, one "3,1,4" per sequence) make a batch; sequences of different lengths are right-padded (see
    :mod:`explain.core.padding`).
    ``defaulted``: the texts are the model's own, not the user's (messages then say so)."""
    tokens = [tokens] if isinstance(tokens, str) else tokens
    if tokens is not None and not all(t.strip() for t in tokens):
        raise UsageError("--tokens is empty; give ids such as 3,1,4, or drop --tokens")
    if tokens and texts:
        raise UsageError("give either --text or --tokens, not both")
    if tokens and embeddings is not None:
        raise UsageError("give either --embeddings or --tokens, not both: both set the input")
    targets = [target] if isinstance(target, str) else list(target or [])
    if targets and not entry.uses("target"):
        raise UsageError(f"--target is for the {quoted(users(OPTION['target']))} model (the decoder's text); "
                         f"'{entry.name}' has no decoder")
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
            raise UsageError(f"'{entry.name}' reads token ids (its loss needs them); use --text or --tokens, not --embeddings")
    elif tokens and len(tokens) == 1:
        ids = parse_token_ids(tokens[0])
        inp.ids = [ids]
        inp.tokens = [tok.label(i) for i in ids]
    elif tokens:  # a batch of id sequences, padded as texts are
        batch = [parse_token_ids(t) for t in tokens]
        inp.ids = batch
        if needs_padding(batch):
            inp.pad_id, inp.lengths = tok.pad_id(), [len(b) for b in batch]
            inp.ids = pad_right(batch, inp.pad_id)
        inp.batch_tokens = [pad_labels([tok.label(i) for i in b], len(inp.ids[0]), _pad_word(tok, inp)) for b in batch]
        inp.tokens = inp.batch_tokens[0]
    else:
        batch = [tok.encode(t) for t in texts]
        for t, ids in zip(texts, batch):
            if not ids:
                what = f"the default text '{t}'" if defaulted else f"--text '{t}'"
                raise InputError(f"{what} has no {'words' if not tok.fixed else 'tokens'} in this tokenizer; give "
                                 + ("--text or --tokens" if defaulted else "some text"))
        inp.ids = batch
        if needs_padding(batch):
            inp.pad_id, inp.lengths = tok.pad_id(), [len(b) for b in batch]
            inp.ids = pad_right(batch, inp.pad_id)
        inp.batch_tokens = [pad_labels(tok.labels(t, b), len(inp.ids[0]), _pad_word(tok, inp))
                            for t, b in zip(texts, batch)]
        inp.tokens = inp.batch_tokens[0]
    if entry.uses("target"):
        _prepare_targets(inp, tok, targets)
    inp.vocab = tok.vocab_labels()
    if tok.fixed:  # a checkpoint's vocabulary: its size is the model's
        for i in (i for b in (inp.ids or []) for i in b):
            if not 0 <= i < len(tok):
                raise InputError(f"token id {i} is outside the {tok.name}'s vocabulary of {len(tok)}")
    inp.n_vocab_needed = len(tok)  # a token id beyond the vocabulary is an error (explain.engine.api), never a resize
    return inp


def _pad_word(tok: TextTokenizer, inp: Inputs) -> str:
    """The word of the id the batch pads with, as its labels say it: the trained GPT pads with <eos>, not <pad>."""
    return tok.label(inp.pad_id) if inp.pad_id is not None else PAD


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
