"""What the trained GPT must have learned (issue 24's "Done when"), measured on a checkpoint folder with the
recorded forward pass (explain.run): used by test_trained_model.py on the shipped model, and by the training
benchmark on a fresh one."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import explain
from explain.train.corpus import fixed_positions, span_words, split_sentences


def next_probs(folder: str | Path, text: str) -> tuple[np.ndarray, list[str]]:
    """The next-token probabilities at every position of ``text`` (T, V), and the vocabulary."""
    tr = explain.run("gpt", checkpoint=str(folder), text=text)
    return tr["probs"].output[0], list(tr.labels["vocab"])


def p_next(folder: str | Path, prompt: str, word: str) -> tuple[float, str]:
    """p(word | prompt) and the top-1 word after the prompt."""
    probs, vocab = next_probs(folder, prompt)
    return float(probs[-1][vocab.index(word)]), vocab[int(np.argmax(probs[-1]))]


def fixed_accuracy(folder: str | Path) -> tuple[float, int]:
    """Top-1 accuracy over the positions of the held-out sentences whose next word the grammar fixes."""
    right = total = 0
    for s in split_sentences()[1]:
        words = s.split()
        probs, vocab = next_probs(folder, s)
        for i in fixed_positions(s):
            right += vocab[int(np.argmax(probs[i]))] == words[i + 1]
            total += 1
    return right / total, total


def induction(folder: str | Path, n: int = 10, seed: int = 123) -> tuple[float, float, str]:
    """On ``n`` random spans of 8 vocabulary words followed by the same span: the mean probability of the
    second copy's tokens after its first, and the best head's mean attention from those positions to the token
    after the earlier occurrence (and that head's name, blocks.L head H)."""
    rng = np.random.default_rng(seed)
    words = span_words()
    ps, att = [], {}
    for _ in range(n):
        span = [words[i] for i in rng.choice(len(words), size=8, replace=False)]
        tr = explain.run("gpt", checkpoint=str(folder), text=" ".join(span + span))
        probs, vocab = tr["probs"].output[0], list(tr.labels["vocab"])
        k = len(span)
        # position k + j holds span[j] again; it should predict span[j + 1], which sits at j + 1 earlier
        for j in range(0, k - 1):
            ps.append(probs[k + j][vocab.index(span[j + 1])])
        for layer in range(tr.config.n_layers):
            A = tr[f"blocks.{layer}.attn.pattern"].output[0]  # (head, query, key)
            for h in range(A.shape[0]):
                att.setdefault(f"blocks.{layer} head {h}", []).extend(A[h, k + j, j + 1] for j in range(k - 1))
    best = max(att, key=lambda name: np.mean(att[name]))
    return float(np.mean(ps)), float(np.mean(att[best])), best
