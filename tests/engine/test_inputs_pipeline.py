"""One input pipeline: :func:`explain.engine.prepare.prepare` tokenizes with the word-level tokenizer or with any
:class:`~explain.checkpoints.protocol.TextTokenizer`, such as a GPT-2 checkpoint's BPE."""

from __future__ import annotations

from pathlib import Path

import pytest

from explain.checkpoints.protocol import TextTokenizer
from explain.core.errors import InputError
from explain.core.registry import check_model_name
from explain.core.words import Tokenizer
from explain.engine.api import plan
from explain.engine.prepare import prepare

GPT = check_model_name("gpt")
TINY = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"


class Letters:
    """A fixed-vocabulary tokenizer with one token per letter a–z (ids 0–25)."""

    name = "letters"
    fixed = True
    unknown = ()  # every letter is known

    def encode(self, text: str) -> list[int]:
        return [ord(c) - 97 for c in text if c.isalpha()]

    def label(self, token_id: int) -> str:
        return chr(97 + token_id)

    def labels(self, text: str, ids: list[int]) -> list[str]:
        return [self.label(i) for i in ids]

    def vocab_labels(self) -> list[str]:
        return [chr(97 + i) for i in range(26)]

    def pad_id(self) -> int:
        return 0  # a fixed vocabulary pads with one of its own ids, as GPT-2 pads with its eos

    def __len__(self) -> int:
        return 26


@pytest.mark.parametrize("tok", [Tokenizer(["a b"]), Letters()], ids=["word", "letters"])
def test_tokenizers_have_every_protocol_member(tok) -> None:
    assert isinstance(tok, TextTokenizer)  # runtime_checkable: every member, data ones included


def test_the_word_tokenizer_says_which_words_it_did_not_know() -> None:
    tok = Tokenizer(["a b"])
    assert tok.encode("The zebra and the Quagga") == [tok.index["the"], 2, tok.index["and"], tok.index["the"], 2]
    assert tok.unknown == ["zebra", "Quagga"]  # as written
    tok.encode("the cat")
    assert tok.unknown == []  # the last text's only


def test_checkpoint_is_a_tokenizer() -> None:
    pytest.importorskip("tokenizers")
    from explain.checkpoints.open import open_checkpoint

    ck = open_checkpoint(TINY)
    assert isinstance(ck, TextTokenizer)
    inp = prepare(GPT, ["hello world"], None, None, None, ck)
    assert inp.ids == [ck.encode("hello world")]
    assert inp.tokens == [ck.label(i) for i in inp.ids[0]]
    assert inp.n_vocab_needed == len(ck) == len(inp.vocab)


def test_a_fixed_vocabulary_labels_positions_and_refuses_ids_past_it() -> None:
    inp = prepare(GPT, ["cab", "dog"], None, None, None, Letters())
    assert inp.ids == [[2, 0, 1], [3, 14, 6]]
    assert inp.tokens == ["c", "a", "b"]
    assert inp.n_vocab_needed == 26
    with pytest.raises(InputError, match="token id 30 is outside the letters's vocabulary of 26"):
        prepare(GPT, [], None, "1,30", None, Letters())


def test_an_id_past_the_word_vocabulary_is_refused_not_grown_into() -> None:
    """A huge id must not size the vocabulary (one id of 10⁸ meant 10⁸ embedding rows): the vocabulary is the
    tokenizer's, or --vocab, and an id past it is an error naming its size and the fix."""
    inp = prepare(GPT, [], None, "3,500", None)
    assert inp.n_vocab_needed == len(Tokenizer())
    with pytest.raises(InputError, match=rf"token id 500 is outside the vocabulary of {len(Tokenizer())} tokens.*--vocab 501"):
        plan("gpt", tokens="3,500")
    assert plan("gpt", tokens="3,500", d_vocab=501).config.d_vocab == 501
