"""Every number in the narration of tutorials 22 ("From text to ids") and 23 ("Attention without the matrix") is
one this test computes itself, without explain: the TOML is read with tomllib, each number is found with a
pattern and matched, at the decimals it is printed with, against values computed here with numpy, Python's
str.encode and the ``tokenizers`` package (SmolLM2's merges and ranks: with ``gguf`` and ``tokenizers`` in the
network test at the end)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
# a number as prose writes it: 1e-13, −0.5, 100,000, 0.6065, 4; not the 3 of c3 or the 8 of UTF-8's hex pairs
NUMBER = re.compile(r"(?<![\w.])[−-]?\d+(?:,\d{3})*(?:\.\d+)?(?:e[−-]\d+)?")


def narrated(name: str) -> list[tuple[str, str, float, int]]:
    """(stop's step, the number as written, its value, its decimals) for every number of every narration."""
    doc = tomllib.loads((ROOT / "tutorials" / f"{name}.toml").read_text())
    out = []
    for stop in doc["stops"]:
        for text in (stop["narration"], stop.get("answer", ""), stop.get("question", "")):
            for m in NUMBER.finditer(text):
                s = m.group().replace("−", "-")
                decimals = len(s.split(".")[1].split("e")[0]) if "." in s else 0
                out.append((stop["step"], m.group(), float(s.replace(",", "")), decimals))
    return out


def unmatched(name: str, allowed: set[float]) -> list[str]:
    bad = []
    for step, text, value, decimals in narrated(name):
        half = 0.5 * 10 ** -decimals if decimals else 1e-9
        if not any(abs(value - a) <= half + 1e-12 for a in allowed):
            bad.append(f"{step}: {text}")
    return bad


def _flat(*arrays) -> set[float]:
    return {float(x) for a in arrays for x in np.ravel(a)}


# -- tutorial 23: the online softmax ----------------------------------------------------------------------------
Q = np.array([[1, 0, 2, 0], [0, 1, 1, 0], [1, 1, 0, 1], [0, 2, 1, 1]], float)
K = np.array([[2, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 1], [0, 0, 2, 1]], float)
V = np.array([[1, 0], [0, 1], [1, 1], [2, 1]], float)
PUBLISHED_P0 = np.array([0.1570, 0.1570, 0.2588, 0.4269])  # quoted from the published walkthrough
PUBLISHED_O0 = np.array([1.2696, 0.8427])  # quoted from it too


def online_softmax_values() -> set[float]:
    """Every value the walkthrough of tutorial 23 can name, computed from Q, K, V with numpy."""
    S = Q @ K.T / 2
    S0, S1 = S[:, :2], S[:, 2:]
    m0 = S0.max(1)
    P0 = np.exp(S0 - m0[:, None])
    l0, O0 = P0.sum(1), P0 @ V[:2]
    m1 = np.maximum(m0, S1.max(1))
    a1 = np.exp(m0 - m1)
    P1 = np.exp(S1 - m1[:, None])
    l1, O1 = a1 * l0 + P1.sum(1), a1[:, None] * O0 + P1 @ V[2:]
    Z = O1 / l1[:, None]
    P = np.exp(S - S.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    np.testing.assert_allclose(Z, P @ V, rtol=1e-15)  # the online softmax is the softmax
    np.testing.assert_allclose(PUBLISHED_P0 @ V, PUBLISHED_O0, atol=1e-12)  # the published O[0] is its P row × V
    assert list(np.round(P[0], 4)) != list(PUBLISHED_P0) and list(np.round(Z[0], 4)) == [1.2699, 0.8429]
    T, d = Q.shape
    return (_flat(Q, K, V, Q @ K.T, S, m0, P0, l0, O0, m1, a1, P1, l1, O1, Z, P, S0 - m0[:, None], S1 - m1[:, None],
                  m0 - m1, a1 * l0, P1.sum(1), a1[:, None] * O0, P1 @ V[2:], PUBLISHED_P0, PUBLISHED_O0)
            | {T, d, np.sqrt(d), 2, 100_000, 1e-13, *range(T)})  # sizes, √d_k, the tile, indices, a long text


def test_attention_without_the_matrix_narrates_only_computed_numbers() -> None:
    numbers = narrated("23-attention-without-the-matrix")
    assert len(numbers) > 60
    assert unmatched("23-attention-without-the-matrix", online_softmax_values()) == []


# -- tutorial 22: from text to ids ------------------------------------------------------------------------------
TEXT = "The café is happy!"
SMOLLM2 = {504, 3575, 282, 4649, 314, 13, 17, 20, 260, 949, 1156, 3323, 7}  # checked by the network test below


def text_values() -> set[float]:
    """Every value tutorial 22's narration can name besides SmolLM2's, from str.encode and ``tokenizers`` on the
    shipped model's own tokenizer.json."""
    from tokenizers import Tokenizer

    raw = TEXT.encode("utf-8")
    tok = Tokenizer.from_file(str(ROOT / "explain" / "checkpoints" / "trained" / "gpt-tiny" / "tokenizer.json"))
    ids = tok.encode(TEXT, add_special_tokens=False).ids
    assert ids == [3, 2, 2, 6, 29, 43]
    pieces = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(TEXT.lower())]
    assert pieces == ["the", "caf", "é", "is", "happy", "!"]
    utf8 = {len(chr(c).encode()) for c in (0x41, 0xE9, 0x20AC, 0x1F600)}  # 1 to 4 bytes a character
    return ({len(TEXT), len(raw), *raw, *TEXT.lower().encode(), *ids, len(pieces), tok.get_vocab_size(),
             tok.token_to_id("<unk>"), 2 ** 8, 8, 2, 3, *utf8} | SMOLLM2)  # 2**8 bytes; UTF-8, GPT-2, Llama 3


def test_from_text_to_ids_narrates_only_computed_numbers() -> None:
    assert unmatched("22-from-text-to-ids", text_values()) == []
    assert {v for _, _, v, _ in narrated("22-from-text-to-ids")} >= SMOLLM2


@pytest.mark.network
def test_smollm2_numbers_of_tutorial_22() -> None:
    """SmolLM2's ids of "The capital of France is", and the 7 merges of " capital" with their ranks, from its GGUF
    with ``gguf`` and a BPE written here (the rank is a merge's line in tokenizer.ggml.merges)."""
    from gguf import GGUFReader
    from smollm2 import smollm2_gguf_or_fail
    from tokenizers import Tokenizer, models
    from tokenizers import pre_tokenizers as pt

    reader = GGUFReader(str(smollm2_gguf_or_fail()))

    def field(key: str) -> list[str]:
        f = reader.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    tokens, merges = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.merges")
    rank = {tuple(m.split(" ", 1)): r for r, m in enumerate(merges)}
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=[tuple(m.split(" ", 1)) for m in
                                                                                merges]))
    tok.pre_tokenizer = pt.Sequence([pt.Digits(individual_digits=True), pt.ByteLevel(add_prefix_space=False)])
    assert tok.encode("The capital of France is", add_special_tokens=False).ids == [504, 3575, 282, 4649, 314]
    symbols, ranks = list("Ġcapital"), []  # ' capital' in GPT-2's byte alphabet: a space is Ġ
    while len(symbols) > 1:
        best = min((rank[p], i) for i, p in enumerate(zip(symbols, symbols[1:])) if p in rank)
        ranks.append(best[0])
        symbols[best[1]:best[1] + 2] = ["".join(symbols[best[1]:best[1] + 2])]
    assert symbols == ["Ġcapital"] and ranks == [13, 17, 20, 260, 949, 1156, 3323] and len(ranks) == 7
    assert len(b" capital") == 8
