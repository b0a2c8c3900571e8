"""The Python entry points: :func:`plan` (a shape-only trace, no numpy) and :func:`run` (the numeric trace).

``run`` works in four stages, each of which can refuse the request with a one-line error before the next:
inputs (tokenize or load), config (validate, size the vocabulary), plan (every step's shape from each op's own
rule, and the memory estimate), and the numeric run with weights loaded or initialised from the seed.
"""

from __future__ import annotations

import os
from typing import Any

from explain.config import Config, check_model_name, make_config, with_vocab
from explain.errors import ConfigError, InputError, UsageError
from explain.inputs import Inputs, prepare
from explain.memory import (  # noqa: F401 - part of this module's interface
    MEMORY_SHARE,
    check_memory,
    generation_bytes,
    memory_need,
)
from explain.options import OPTION, flag
from explain.registry import DEFAULT_MODEL, MODELS, able, forward_of, quoted
from explain.trace import Recorder, Trace


def _prepare(model: str, text: str | list[str] | None = None, target: str | list[str] | None = None,
             tokens: str | list[int] | None = None, embeddings: str | None = None,
             checkpoint: Any = None, **options: Any) -> tuple[Config, Inputs]:
    """Inputs and a validated config with d_vocab set."""
    check_model_name(model)  # from Python too: a one-line UsageError, not a KeyError
    texts = [text] if isinstance(text, str) else list(text or [])
    if isinstance(tokens, (list, tuple)):
        tokens = ",".join(str(t) for t in tokens)
    if isinstance(tokens, str) and not tokens.strip():
        raise UsageError("--tokens is empty; give ids such as 3,1,4, or drop --tokens")
    ck = None
    if checkpoint is not None:  # its config.json sets every dimension, its tokenizer the ids
        ck = _open_checked(model, checkpoint, embeddings, target, options)
        options = {**options, **ck.options}
    if not texts and not tokens and embeddings is None:
        texts = [MODELS[model].text]
    if target is None:
        target = MODELS[model].target
    inp = prepare(model, texts, target, tokens if isinstance(tokens, str) else None, embeddings, ck)
    if inp.embeddings is not None:
        width = int(inp.embeddings.shape[-1])
        if options.get("d_model") is None:
            options["d_model"] = width
            if options.get("n_heads") is None and MODELS[model].heads is not None:
                options["n_heads"] = MODELS[model].heads
        elif options["d_model"] != width:
            raise InputError(f"the embeddings are {width} wide but --d-model is {options['d_model']}; "
                             f"drop --d-model or give embeddings with {options['d_model']} columns")
    cfg = make_config(model, **options)
    cfg = with_vocab(cfg, inp.n_vocab_needed)
    _check_ids(inp, cfg.d_vocab, None if ck else "--vocab")
    if inp.lengths is not None and not cfg.normalize == OPTION["normalize"].default:
        raise ConfigError(f"{flag('normalize')} {cfg.normalize} cannot skip padding (a hidden key must get weight 0, "
                          "and only softmax turns −inf into 0); give texts of the same length or drop it")
    longest = max(inp.seq_len, len((inp.target_ids or [[]])[0]))
    if longest > cfg.n_ctx:
        fix = "shorten the text" if ck else f"shorten the text or use {flag('n_ctx')} {longest}"
        where = "the checkpoint's context" if ck else "the context"
        raise InputError(f"the input has {longest} tokens but {where} is {cfg.n_ctx}; {fix}")
    return cfg, inp


def _check_ids(inp: Inputs, d_vocab: int | None, flag: str | None) -> None:
    """Refuse a token id outside the vocabulary, naming its size (a huge id never grows the vocabulary)."""
    ids = [i for b in (inp.ids or []) for i in b]
    top = max(ids, default=-1)
    if d_vocab is not None and top >= d_vocab:
        from explain.limits import MAX_VOCAB

        more = f", or --vocab {top + 1:,} or more" if flag and top < MAX_VOCAB else ""
        fix = (f"give ids below {d_vocab:,}{more}" if flag
               else f"give ids below {d_vocab:,} (the checkpoint's vocab_size)")
        raise InputError(f"token id {top:,} is outside the vocabulary of {d_vocab:,} tokens (ids 0–{d_vocab - 1:,}); "
                         + fix)


def _open(model: str, checkpoint: Any) -> Any:
    """A checkpoint object from a folder path (or one already opened), once ``model`` is one that loads
    checkpoints: refused before the folder is read."""
    if not MODELS[check_model_name(model)].uses("checkpoint"):
        raise UsageError(f"--checkpoint loads a GPT-2 model; use {quoted(able('checkpoint'))}, not '{model}'")
    if isinstance(checkpoint, (str, os.PathLike)):
        from explain.checkpoint import open_checkpoint

        return open_checkpoint(str(checkpoint))
    return checkpoint


def _open_checked(model: str, checkpoint: Any, embeddings: Any, target: Any, options: dict[str, Any]) -> Any:
    """The opened checkpoint, once the request is one it can serve: a model that loads checkpoints, token
    inputs, and no option that contradicts its config.json."""
    if embeddings is not None or target is not None:
        raise UsageError("a checkpoint reads token ids: use --text or --tokens, not --embeddings/--target")
    ck = _open(model, checkpoint)
    for key, value in ck.options.items():
        given = options.get(key)
        if given is not None and given != value:
            raise ConfigError(f"{flag(key)} {given} conflicts with the checkpoint's {key} = {value}; "
                              "drop the option (the checkpoint's config.json sets it)")
    return ck


def _labels(cfg: Config, inp: Inputs) -> dict[str, list[str]]:
    from explain.text import RowLabels

    return {"pos": inp.tokens, "vocab": RowLabels(inp.vocab, cfg.d_vocab or 0)}  # lazy: d_vocab may be 10⁷


def _record(cfg: Config, inp: Inputs, params: dict | None, shape_only: bool, sampling: Any = None,
            training: Any = None) -> Trace:
    """Record the model's steps; with ``sampling``, then the generated tokens; with ``training`` (a
    :class:`explain.backward.Training`), then its objective, the backward pass and, with a learning rate, one
    SGD step."""
    from explain.models.notation import notation

    rec = Recorder(cfg, params, shape_only, notation(cfg))
    rec.labels.update(_labels(cfg, inp))
    if len(inp.batch_tokens) > 1:  # a batch: each item's positions have their own words, <pad> included
        rec.batch_labels["pos"] = rec.batch_labels["src"] = [list(t) for t in inp.batch_tokens]
        if len(inp.batch_target_tokens) > 1:
            rec.batch_labels["tgt"] = [list(t) for t in inp.batch_target_tokens]
    _model(rec, cfg, inp)
    trace = rec.trace()
    if sampling is not None:
        from explain.models.generate import generate

        generate(rec, cfg, inp, sampling)
        trace = rec.trace()
    if training is not None:
        from explain.backward import backward, objective, sgd

        start, seed = objective(rec, training)
        backward(rec, start, seed)
        if training.lr is not None:
            from explain.backward import record_loss_after

            sgd(rec, training.lr)
            record_loss_after(rec, training.lr, lambda new: _loss_with(cfg, inp, new, training))
        trace = rec.trace()
    return trace


def _check_generation(cfg: Config, inp: Inputs, sampling: Any) -> None:
    """Refuse a generation the model cannot run: not a GPT, or one that would run past the context."""
    if not MODELS[cfg.model].generates:
        raise UsageError(f"generation needs a decoder-only model that predicts the next token: use "
                         f"{quoted(able('generates'), ', ')}, not "
                         f"'{cfg.model}'")
    if inp.lengths is not None:  # a right-padded prompt would continue after its <pad>s
        raise InputError(f"the prompts of a generation must have the same number of tokens, got {inp.lengths}; "
                         "give texts of the same length, or generate from each text alone")
    last = inp.seq_len + sampling.max_new_tokens - 1  # positions the forward passes use
    if last > cfg.n_ctx:
        room = cfg.n_ctx - inp.seq_len + 1
        raise InputError(f"the prompt has {inp.seq_len} tokens and {sampling.max_new_tokens} new ones would "
                         f"need {last} positions, but the context is {cfg.n_ctx}; use --max-new-tokens {room} or "
                         "less, or a shorter prompt")


def _training(options: dict[str, Any]) -> Any:
    """Pop the backward options (``backward``, ``output_target``, ``grad_output``, ``lr``) from ``options``: a
    :class:`explain.backward.Training`, or None for a forward-only run. A learning rate implies backward."""
    wanted = options.pop("backward", False)
    given = {k: options.pop(k, None) for k in ("output_target", "grad_output", "lr")}
    if not wanted and all(v is None for v in given.values()):
        return None
    from explain.backward import Training, check_lr

    if not wanted and given["lr"] is None:
        raise UsageError("--output-target and --grad-output choose the objective of the backward pass; add "
                         "--backward")
    if given["lr"] is not None:
        given["lr"] = check_lr(given["lr"])
    return Training(**given)


def _loss_with(cfg: Config, inp: Inputs, params: dict, training: Any) -> float:
    """The loss the model (with its objective) gives with ``params``: a second, forward-only run."""
    from dataclasses import replace

    from explain.backward import objective

    rec = Recorder(cfg, params, False)
    _model(rec, cfg, inp)
    objective(rec, replace(training, lr=None))
    return float(next(s.output for s in rec.steps if s.name == "loss"))


def _model(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Record the model's own steps."""
    forward_of(MODELS[cfg.model])(rec, cfg, inp)


def plan(model: str, *, sampling: Any = None, **options: Any) -> Trace:
    """A shape-only trace: every step's shape and every parameter's, from the ops' own shape rules, with no
    numbers computed (and no numpy imported unless embeddings are loaded from a file). With ``sampling`` (a
    :class:`~explain.sampling.Sampling`), the generation's steps too."""
    options = {k: v for k, v in options.items() if k not in ("weights",)}
    training = _training(options)
    cfg, inp = _prepare(model, **options)
    if sampling is not None:
        _check_generation(cfg, inp, sampling)
    return _record(cfg, inp, None, shape_only=True, sampling=sampling, training=training)


def estimate(cfg: Config, inp: Inputs, training: Any = None) -> tuple[int, int]:
    """(parameter count, trace bytes) of the run, in closed form: every model is one stem, ``n_layers`` equal
    blocks and one head, so the plans of one and two layers give the cost of a block, and the total follows
    without planning the other n_layers − 2 (a 10⁸-layer request is refused in milliseconds). With
    ``training`` the trace counts the objective, every gradient step and the SGD update (a block's gradients
    are a block's cost too, so the closed form holds)."""
    from dataclasses import replace

    if cfg.n_layers <= 2:
        t = _record(cfg, inp, None, shape_only=True, training=training)
        return t.n_params, t.nbytes
    one = _record(replace(cfg, n_layers=1), inp, None, shape_only=True, training=training)
    two = _record(replace(cfg, n_layers=2), inp, None, shape_only=True, training=training)
    k = cfg.n_layers - 1
    return (one.n_params + k * (two.n_params - one.n_params), one.nbytes + k * (two.nbytes - one.nbytes))


def with_backward(trace: Trace, **training: Any) -> Trace:
    """``trace`` with its backward pass recorded after its steps, without running the forward again (the TUI's
    ``r`` key). ``training`` takes :func:`run`'s ``output_target``, ``grad_output``, ``lr`` (no ``lr`` here:
    an SGD step needs the model again). Refused before allocating if the gradients would not fit."""
    from explain.backward import backward, objective

    if trace.backward is not None:
        return trace
    spec = _training({"backward": True, **training})
    if spec.lr is not None:
        raise UsageError("--lr re-runs the model; use explain.run(..., lr=...) instead")
    for shape_only in (True, False):  # the plan first: refuse before allocating
        rec = Recorder.resume(trace, shape_only)
        start, seed = objective(rec, spec)
        backward(rec, start, seed)
        out = rec.trace()
        if shape_only:
            check_memory(out)
    out.meta = dict(trace.meta)
    return out


def run(model: str, *, weights: str | dict | None = None, sampling: Any = None, **options: Any) -> Trace:
    """Run ``model`` one operation at a time and return its :class:`Trace`.

    Options are the CLI's, named as in :data:`explain.options.OPTIONS` (``n_heads`` for ``--heads``). From
    Python, ``text`` may also be a list (a batch; texts of different lengths are right-padded, and the run then
    records a padding mask before each softmax and leaves padded targets out of the loss), ``target`` a list (one
    per text), ``tokens`` a list of ids, ``embeddings`` a (T, d) array or a (batch, T, d) batch, ``weights`` a
    dict of arrays, and ``checkpoint`` an opened checkpoint.
    With ``sampling`` (a :class:`~explain.sampling.Sampling`, see :func:`generate`), new tokens are appended
    after the forward pass. For the backward pass (:mod:`explain.backward`): ``backward=True``,
    ``output_target`` / ``grad_output`` (an array or a file: the objective of a model without a loss) and
    ``lr`` (one SGD step, then the loss after it).
    """
    from explain.weights import check_params, init_params, load_params

    if options.get("checkpoint") is not None:
        options["checkpoint"] = _open(model, options["checkpoint"])  # open once: the tokenizer, then the weights
    training = _training(options)
    cfg, inp = _prepare(model, **options)
    if sampling is not None and training is not None:
        raise UsageError("--backward runs on the forward pass of the prompt; drop it to generate, or drop the "
                         "generation options to see the backward pass")
    check_memory(estimate(cfg, inp, training), gradients=training is not None)  # before planning every layer
    if sampling is not None:
        _check_generation(cfg, inp, sampling)
    planned = _record(cfg, inp, None, shape_only=True, sampling=sampling, training=training)
    if sampling is not None:
        check_memory(planned)  # the estimate is the prompt's forward; the plan adds the new tokens
    if options.get("checkpoint") is not None and weights is None:
        ck = _open(model, options["checkpoint"])
        params = check_params(ck.params(), planned.specs, f"checkpoint '{getattr(ck, 'path', 'given')}'")
    elif weights is None:
        params = init_params(planned.specs, cfg.seed)
    elif isinstance(weights, dict):
        params = check_params(weights, planned.specs)
    else:
        params = load_params(weights, planned.specs)
    import numpy as np

    # Finite but huge weights (1e308) overflow to inf/nan in the run: the trace shows them as values, and
    # numpy's RuntimeWarnings (with its internal file paths) are not printed over the output.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        trace = _record(cfg, inp, params, shape_only=False, sampling=sampling, training=training)
    return trace


def generate(model: str = DEFAULT_MODEL, *, max_new_tokens: int | None = None, temperature: float | None = None,
             top_k: int | None = None, top_p: float | None = None, greedy: bool = False, ignore_eos: bool = False,
             sampling: Any = None, **options: Any) -> Trace:
    """Run the prompt through ``model`` (a gpt) and append new tokens one at a time; returns the trace, whose
    ``generation`` (:class:`~explain.trace.Generation`) names the steps that hold the new tokens (see
    :func:`generated_ids`).

    ``seed`` seeds everything random: the initial weights (without a checkpoint or ``weights``) and the draws.
    ``temperature=0`` is greedy decoding. The generation stops early once the end-of-text token is drawn (a
    checkpoint's ``eos_token_id``, or ``<eos>``), unless ``ignore_eos``. ``sampling``, settings already
    validated by :func:`explain.sampling.make_sampling` (the CLI's), stands for the five settings before it. The
    other options are :func:`run`'s."""
    from dataclasses import replace

    if sampling is None:
        from explain.sampling import make_sampling

        sampling = make_sampling(max_new_tokens, temperature, top_k, top_p, greedy, options.get("seed"))
    if not ignore_eos:
        sampling = replace(sampling, eos=_eos(model, options))
    return run(model, sampling=sampling, **options)


def _eos(model: str, options: dict[str, Any]) -> int | None:
    """The end-of-text token id: the checkpoint's ``eos_token_id`` (the first, if a list), else ``<eos>``."""
    from explain.inputs import EOS

    if options.get("checkpoint") is None:
        return EOS
    options["checkpoint"] = ck = _open(model, options["checkpoint"])
    eos = ck.config.get("eos_token_id")
    eos = eos[0] if isinstance(eos, list) and eos else eos
    return eos if isinstance(eos, int) and not isinstance(eos, bool) else None


def generated_ids(trace: Trace) -> list[list[int]]:
    """The new token ids of a generation's trace, one list per sequence of the batch."""
    assert trace.generation is not None, "not a generation's trace"
    names = trace.generation.steps
    return [[int(trace[n].output[b, 0]) for n in names] for b in range(trace[names[0]].shape[0])]


__all__ = ["run", "plan", "generate", "generated_ids", "with_backward", "check_memory", "estimate"]
