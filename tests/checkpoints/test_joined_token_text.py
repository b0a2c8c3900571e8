"""A generated text of byte-level tokens reads as text: SmolLM2 splits '日' into three byte tokens, each
labelled by its byte ('\\xe6', '\\x97', '\\xa5'); the text so far and --plain's generated line showed
'\\xe6\\x97\\xa5本' (session 9, `explain generate --checkpoint …gguf --text "Café 🙂 2024 日本"`). Side by side the
bytes decode; the labels come from explain's own label maker on a byte-level tokenizer.json, the expected text
from Python's str."""

from __future__ import annotations

from explain.checkpoints.token_labels import byte_decoder, token_labels
from explain.render.predictions import joined


def _byte_level_vocab(pieces: list[bytes]) -> dict:
    """A tokenizer.json whose tokens are these byte strings, written in GPT-2's byte-level alphabet."""
    to_char = {b: c for c, b in byte_decoder().items()}
    vocab = {"".join(to_char[b] for b in p): i for i, p in enumerate(pieces)}
    return {"model": {"vocab": vocab}, "decoder": {"type": "ByteLevel"}}


def test_a_character_split_over_byte_tokens_is_one_character_again() -> None:
    text = " 日本 ok"
    pieces = [b" ", *[bytes([b]) for b in "日".encode()], "本".encode(), b" ok", "\u202e".encode()[:2]]
    labels = token_labels(_byte_level_vocab(pieces), "t.json")
    shown = [labels[i] for i in range(len(pieces))]
    assert shown[1:4] == ["\\xe6", "\\x97", "\\xa5"]  # each byte token alone: its escape
    assert joined(shown[:6], "") == text.replace(" ", "␣")
    assert joined(shown, "") == text.replace(" ", "␣") + "\\xe2\\x80"  # an incomplete character keeps its escapes


def test_a_control_character_made_of_bytes_is_shown_not_obeyed() -> None:
    bidi = "\u202e".encode()  # U+202E, right-to-left override: 3 bytes
    assert joined(["a", *[f"\\x{b:02x}" for b in bidi], "b"], "") == "a\\u202eb"


def test_word_level_labels_are_joined_by_spaces_as_they_are() -> None:
    assert joined(["the", "\\xe6", "cat"], " ") == "the \\xe6 cat"
