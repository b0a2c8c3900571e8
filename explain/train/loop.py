"""The training loop of ``explain train``: batches from a corpus, the untraced step
(:mod:`explain.train.step`), AdamW with warm-up and cosine decay, the held-out loss, checkpoints.

The loop reports through a callback (``on_progress``, one :class:`Progress` per step) and asks ``should_stop``
after every whole step, so the shell decides what to draw and what stops it (the CLI: a curve in the
terminal, Ctrl-C); nothing here prints. Everything is seeded: the same settings give the same losses.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from explain.core.config import Config
from explain.core.words import EOS, Tokenizer
from explain.train.corpus import Corpus
from explain.train.step import AdamW, loss_and_grads


@dataclass(frozen=True)
class Settings:
    """How to train: steps, peak learning rate, sequences per batch, the seed of the weights and batches."""

    steps: int = 2000
    lr: float = 6e-3
    batch_size: int = 16
    seed: int = 0
    warmup: int = 50  # steps of linear warm-up to lr, then cosine decay to lr/10 (the first 50 losses do not
    # depend on the number of steps: CI checks them against the shipped model's curve)
    eval_every: int = 25  # steps between held-out losses (and the last step)
    eval_batches: int = 4
    save_every: int = 250  # steps between checkpoints (and the last step)


@dataclass
class Progress:
    """One step's report."""

    step: int  # 1-based: steps done
    steps: int
    loss: float  # the training batch's loss before this step's update
    val_loss: float | None  # the held-out loss after the update, on evaluation steps
    lr: float
    tokens_per_s: float
    elapsed: float
    saved: bool = False


@dataclass
class Result:
    """What a training run did: the losses (train per step; held-out as (step, loss)), and whether it stopped
    early."""

    params: dict[str, np.ndarray]
    losses: list[float] = field(default_factory=list)
    val_losses: list[tuple[int, float]] = field(default_factory=list)
    stopped: bool = False
    seconds: float = 0.0


def encode_lines(lines: list[str], tok: Tokenizer) -> list[list[int]]:
    """Each line's ids, followed by <eos>."""
    return [tok.encode(ln) + [EOS] for ln in lines]


def make_rows(lines: list[list[int]], n: int, T: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` rows of ``T`` ids, each whole lines drawn at random, cut at T: every row starts at a line's start,
    as a prompt does."""
    rows = np.empty((n, T), dtype=np.int64)
    for r in range(n):
        ids: list[int] = []
        while len(ids) < T:
            ids += lines[int(rng.integers(len(lines)))]
        rows[r] = ids[:T]
    return rows


def lr_at(step: int, s: Settings) -> float:
    """The learning rate of step ``step`` (0-based): linear warm-up, then cosine decay to a tenth."""
    if step < s.warmup:
        return s.lr * (step + 1) / s.warmup
    done = (step - s.warmup) / max(1, s.steps - s.warmup)
    return s.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, done))))


def train(cfg: Config, params: dict[str, np.ndarray], corpus: Corpus, tok: Tokenizer, settings: Settings,
          on_progress: Callable[[Progress], None] = lambda p: None, should_stop: Callable[[], bool] = lambda: False,
          save: Callable[[Result, int], Any] | None = None) -> Result:
    """Train ``params`` (float64, updated in place) on ``corpus``; ``save(result, step)`` writes a checkpoint
    every ``save_every`` steps and at the end (also when ``should_stop`` ends the run early)."""
    T = cfg.n_ctx
    train_ids = encode_lines(corpus.train, tok)
    rng = np.random.default_rng([settings.seed, 2])
    # no held-out lines (a corpus of fewer than 10): no held-out loss, rather than the training lines' under its name
    held = make_rows(encode_lines(corpus.held_out, tok), settings.eval_batches * settings.batch_size, T,
                     np.random.default_rng([settings.seed, 3])) if corpus.held_out else None
    opt = AdamW(lr=settings.lr)
    res = Result(params)
    start = time.perf_counter()
    for step in range(settings.steps):
        batch = make_rows(train_ids, settings.batch_size, T, rng)
        loss, grads = loss_and_grads(params, batch, cfg.n_layers, cfg.n_heads, cfg.ln_eps)
        lr = lr_at(step, settings)
        opt.step(params, grads, lr)
        res.losses.append(loss)
        done = step + 1
        last = done == settings.steps or should_stop()
        val = None
        if held is not None and (done % settings.eval_every == 0 or last):
            val = float(np.mean([loss_and_grads(params, b, cfg.n_layers, cfg.n_heads, cfg.ln_eps, grads=False)[0]
                                 for b in np.split(held, settings.eval_batches)]))
            res.val_losses.append((done, val))
        elapsed = time.perf_counter() - start
        res.seconds = elapsed
        saved = save is not None and (done % settings.save_every == 0 or last)
        if saved:
            save(res, done)
        on_progress(Progress(done, settings.steps, loss, val, lr, done * batch.size / elapsed, elapsed, saved))
        if last:
            res.stopped = done < settings.steps
            break
    return res


def default_output(model: str) -> Path:
    return Path(f"{model}-trained")
