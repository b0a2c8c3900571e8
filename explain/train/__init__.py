"""``explain train``: train a ``gpt`` on a corpus with explain's own kernels and AdamW, and save it as a
Hugging Face folder that ``--checkpoint`` reopens.

:func:`train_model` is the one entry point (the CLI is thin over it): it builds the corpus (the built-in
grammar, :mod:`explain.train.corpus`, or a text file), the vocabulary (explain's word tokenizer over the
corpus), the config (the shipped model's sizes unless given) and GPT-2's initial weights from the seed, then
runs :func:`explain.train.loop.train` and saves checkpoints with :mod:`explain.train.hf`.

It may import ``core``, ``ops``, ``trace``, ``io``, ``checkpoints``, ``models``, ``report`` and ``engine``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from explain.checkpoints.trained import SIZES
from explain.core.config import Config, make_config
from explain.core.errors import ConfigError, InputError, UsageError
from explain.core.limits import MAX_VOCAB
from explain.core.options import OPTION
from explain.core.registry import MODELS, entry
from explain.core.words import Tokenizer
from explain.engine.api import estimate, plan
from explain.engine.memory import check_memory
from explain.engine.request import prepare_run
from explain.engine.weights import init_params
from explain.io.readers import regular_file
from explain.train.corpus import Corpus, builtin_corpus, corpus_from_text
from explain.train.hf import check_output, save_folder
from explain.train.loop import Progress, Result, Settings, train


def load_corpus(path: str | Path | None) -> Corpus:
    """The built-in corpus, or a text file's lines."""
    if path is None:
        return builtin_corpus()
    p = regular_file(path, "corpus", "give a UTF-8 text file, one sequence per line", InputError)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a byte-order mark (Notepad's UTF-8) is no word
    except UnicodeDecodeError:
        raise InputError(f"corpus '{path}' is not UTF-8 text; give a UTF-8 text file, one sequence per line") from None
    corpus = corpus_from_text(text)
    if len(corpus.train) < 2:
        n = len(corpus.train)
        raise InputError(f"corpus '{path}' has {n} usable line{'' if n == 1 else 's'}; give at least 2 lines of words")
    return corpus


def _options(cfg: Config, *drop: str) -> dict[str, Any]:
    """The config as a run's keywords: the options its model uses (a request refuses the others, even at their
    defaults: explain.core.takes.check_model_takes)."""
    model = cfg.spec
    return {k: v for k, v in asdict(cfg).items()
            if k not in ("model", "ln_eps", *drop) and (k not in OPTION or OPTION[k].used_by(model))}


def initial_params(cfg: Config) -> dict[str, np.ndarray]:
    """GPT-2's initialisation from the config's seed, as ``explain run`` makes it (writable copies)."""
    specs = plan(cfg.model, tokens=[0], **_options(cfg)).specs
    return {k: np.array(v) for k, v in init_params(specs, cfg.seed).items()}


def _check_sizes(sizes: dict[str, Any]) -> None:
    """What explain run accepts but training cannot use: one position has no next token to predict (the loss of
    T positions has T − 1 targets), and a GPT-2 folder has no d_head of its own (explain train has no --d-head;
    make_config's refusal would suggest it)."""
    if sizes["n_ctx"] < 2:
        raise UsageError(f"--context {sizes['n_ctx']} leaves no next token to learn (a row of T tokens has T − 1 "
                         "targets); give --context 2 or more")
    d, h = sizes["d_model"], sizes["n_heads"]
    if d % h:
        raise ConfigError(f"d_model {d} is not divisible by {h} heads (GPT-2 splits d_model among its heads); use "
                          f"--heads a divisor of {d}, or --d-model a multiple of {h}")


def _check_memory(cfg: Config, batch: int) -> None:
    """Refuse, before allocating, a training run that will not fit: the weights four times (values, gradients,
    AdamW's m and v) and a batch's activations (a forward trace's bytes per sequence, times the batch; the
    untraced step keeps fewer), from the closed-form estimate every run uses."""
    sizes = _options(cfg, "seed")
    run_cfg, inp = prepare_run(cfg.model, tokens=",".join(["0"] * cfg.n_ctx), **sizes)
    n_params, per_sequence = estimate(run_cfg, inp)
    check_memory((4 * n_params, batch * per_sequence), gradients=True,
                 advice="use a smaller --batch-size or --context, fewer --layers, or a smaller --d-model/--d-ff")


def train_model(model: str = "gpt", corpus: str | Path | None = None, output: str | Path | None = None,
                settings: Settings | None = None, on_progress: Callable[[Progress], None] = lambda p: None,
                should_stop: Callable[[], bool] = lambda: False, force: bool = False,
                **sizes: Any) -> tuple[Config, Result]:
    """Train ``model`` and (with ``output``) save it; returns the config and the result. An earlier checkpoint
    at ``output`` is replaced only with ``force``."""
    settings = settings or Settings()
    if model not in MODELS or not entry(model).can("trains"):  # its untraced kernels are GPT-2's (step.py)
        able = ", ".join(f"'{m.name}'" for m in MODELS.values() if m.can("trains"))
        raise UsageError(f"explain train trains a model it can save as a GPT-2 folder: use {able}, not '{model}'")
    out = check_output(output, force, corpus) if output is not None else None  # before training: ~ expanded, refusals in one line
    data = load_corpus(corpus)
    tok = Tokenizer(data.train + data.held_out)
    if len(tok) > MAX_VOCAB:  # make_config would name --vocab, an option train does not have: the corpus sets it
        raise InputError(f"the corpus has {len(tok):,} different words, more than the {MAX_VOCAB:,} a vocabulary may "
                         "hold; train on a smaller corpus (its words are the vocabulary)")
    given = {k: v for k, v in sizes.items() if v is not None}
    _check_sizes({**SIZES, **given})
    cfg = make_config(model, **{**SIZES, **given, "d_vocab": len(tok), "seed": settings.seed})
    _check_memory(cfg, settings.batch_size)
    params = initial_params(cfg)
    save = None
    if out is not None:
        def save(res: Result, step: int) -> None:
            info = {"settings": asdict(settings), "step": step, "corpus": str(corpus) if corpus else "built-in",
                    "losses": res.losses, "val_losses": res.val_losses}
            save_folder(out, res.params, cfg, tok.words, info)

    return cfg, train(cfg, params, data, tok, settings, on_progress, should_stop, save)


__all__ = ["SIZES", "Settings", "Progress", "Result", "train_model", "load_corpus", "initial_params"]
