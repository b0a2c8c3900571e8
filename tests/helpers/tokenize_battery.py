"""The texts every tokenizer walkthrough is held to ``tokenizers``' own encode on: hand-picked edge cases (empty,
spaces, digits, newlines, emoji, non-ASCII, apostrophes, control characters) and seeded random mixes of them, 240
in all. Code points unassigned in Python's Unicode tables are left out (explain.tokenize.pretokenize)."""

from __future__ import annotations

import random

HAND = [
    "", " ", "  ", "\n", "\n\n", "\t", " \n ", "a", "The capital of France is", "The capital of France is Paris.",
    "hello world", "hello  world", "hello   world  ", "  leading", "trailing  ", "new\nline", "two\n\nlines",
    "crlf\r\nline", "tab\tthere", "nul\x00and\x00more", "12345", "1 2 3", "3.14159", "1,000,000", "2024-06-01", "a1b2c3", "x=42;y=7",
    "I'm", "don't", "it's", "we'll", "they've", "I'D", "'s alone", "rock'n'roll", "café", "naïve", "résumé",
    "über straße", "日本語", "東京 is big", "Привет мир", "γειά σου", "مرحبا", "שלום", "नमस्ते", "한국어", "🙂", "😀😀",
    "emoji 🎉 party", "👩‍👩‍👧 family", "🇫🇷 flag", "a\u00a0b", "a\u3000b", "a\u2003b", "zero\u200bwidth", "x\x1cy",
    "bell\x07", "nul\x00here", "!!!", "...", "?!", "(parens)", "[brackets]", "{braces}", "<html>", "a->b", "$100",
    "50%", "#tag", "@user", "e-mail", "under_score", "CamelCase", "ALLCAPS", "MiXeD", "ﬁ ligature", "Ⅻ roman",
    "½ half", "²³ powers", "İstanbul", "K Kelvin", "ǅ title", " Paris", "Paris", " capital", "capital",
    "[CLS] a [SEP]", "x[MASK]y", "<|endoftext|>", "a<|endoftext|>b", "[UNK]",
]
PARTS = ["the", " cat", "Paris", " capital", "France", " ", "  ", "\n", "\t", "1", "23", "456", "7890", ".", ",", "!",
         "'s", "'t", " don't", "é", "ü", "ß", "日", "本", "語", "🙂", "🎉", "ñ", "Ω", "—", "…", "\u00a0", "x", "Y",
         "tokenization", "un", "believ", "able", "##", "ing", "re", " ", "__", "'", "\"", "(", ")", "?", "-"]


def texts(n_random: int = 160, seed: int = 47) -> list[str]:
    rng = random.Random(seed)
    mixes = ["".join(rng.choice(PARTS) for _ in range(rng.randint(1, 14))) for _ in range(n_random)]
    return HAND + mixes
