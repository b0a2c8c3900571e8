"""The Python entry points: :func:`plan` (a shape-only trace, no numpy) and :func:`run` (the numeric trace).

``run`` works in four stages, each of which can refuse the request with a one-line error before the next:
inputs (tokenize or load) and config (validate, size the vocabulary), both in :mod:`explain.engine.request`; plan (every
step's shape from each op's own rule, and the memory estimate); and the numeric run with weights loaded or
initialised from the seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from explain.checkpoints.layout import origins_in_layout, to_layout
from explain.checkpoints.trained import weights_label
from explain.core.config import Config
from explain.core.errors import UsageError
from explain.core.inputs import Inputs
from explain.core.registry import DEFAULT_MODEL, forward_of
from explain.core.sampling import make_sampling
from explain.core.text import RowLabels
from explain.engine.ask import Request, make_request, training_of
from explain.engine.backward import backward, objective, record_loss_after, sgd
from explain.engine.finite import check_finite
from explain.engine.keywords import check_keywords
from explain.engine.memory import (  # noqa: F401 - part of this module's interface
    MEMORY_SHARE,
    check_memory,
    generation_bytes,
    memory_need,
)
from explain.engine.pricing import price
from explain.engine.request import check_generation, eos_of, prepare
from explain.models.generate import generate as record_generation
from explain.models.notation import notation
from explain.trace import Trace
from explain.trace.recorder import Recorder


def _labels(cfg: Config, inp: Inputs) -> dict[str, list[str]]:
    return {"pos": inp.tokens, "vocab": RowLabels(inp.vocab, cfg.d_vocab or 0)}  # labels on demand: d_vocab may be 10⁷


def _record(cfg: Config, inp: Inputs, params: dict | None, shape_only: bool, sampling: Any = None,
            training: Any = None, on_tensor: Callable[[str, Any], None] | None = None, walk: Any = None) -> Trace:
    """Record the model's steps; with ``walk`` (a tokenizer's walkthrough, --tokenizer-steps), its steps first;
    with ``sampling``, then the generated tokens; with ``training`` (a :class:`explain.engine.backward.Training`),
    then its objective, the backward pass and, with a learning rate, one SGD step."""
    rec = Recorder(cfg, params, shape_only, notation(cfg), on_tensor)
    rec.labels.update(_labels(cfg, inp))
    if walk is not None:
        from explain.tokenize.record import record_tokenizer  # lazy: only with --tokenizer-steps

        record_tokenizer(rec, walk)
    if len(inp.batch_tokens) > 1:  # a batch: each item's positions have their own words, <pad> included
        rec.batch_labels["pos"] = rec.batch_labels["src"] = [list(t) for t in inp.batch_tokens]
        if len(inp.batch_target_tokens) > 1:
            rec.batch_labels["tgt"] = [list(t) for t in inp.batch_target_tokens]
    _model(rec, cfg, inp)
    trace = rec.trace()
    if sampling is not None:
        record_generation(rec, cfg, inp, sampling)
        trace = rec.trace()
    if training is not None:
        start, seed = objective(rec, training)
        backward(rec, start, seed)
        if training.lr is not None:
            sgd(rec, training.lr, training.optimizer)
            record_loss_after(rec, training.lr, lambda new: _loss_with(cfg, inp, new, training), training.optimizer)
        trace = rec.trace()
    return trace


def _loss_with(cfg: Config, inp: Inputs, params: dict, training: Any) -> float:
    """The loss the model (with its objective) gives with ``params``: a second, forward-only run."""
    rec = Recorder(cfg, params, False)
    _model(rec, cfg, inp)
    objective(rec, replace(training, lr=None))
    return float(next(s.output for s in rec.steps if s.name == "loss"))


def _model(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Record the model's own steps."""
    forward_of(cfg.spec)(rec, cfg, inp)


def tokenizer_walk(req: Request, inp: Inputs) -> Any:
    """--tokenizer-steps: the walkthrough of the run's (first) text with the run's tokenizer, its ids checked
    against the ids the run reads; None when it was not asked for."""
    if not req.tokenizer_steps:
        return None
    if req.tokens is not None or req.embeddings is not None:
        raise UsageError("--tokenizer-steps shows how --text becomes ids; give --text, not --tokens or --embeddings")
    from explain.tokenize.family import tokenizer_for  # lazy: only with --tokenizer-steps

    texts = [req.text] if isinstance(req.text, str) else list(req.text or [])
    targets = req.target or req.model.target
    targets = [targets] if isinstance(targets, str) else list(targets or [])
    texts = texts or req.model.texts
    walk = tokenizer_for(req.checkpoint, texts + targets).walk(texts[0])
    n = inp.lengths[0] if inp.lengths else inp.seq_len
    if walk.ids != list(inp.ids[0][:n]):  # one tokenizer, two answers: a bug of explain's, not the user's
        raise AssertionError(f"the tokenizer's walkthrough gave {walk.ids}, the run reads {inp.ids[0][:n]}")
    return walk


def plan(model: str, *, sampling: Any = None, **options: Any) -> Trace:
    """A shape-only trace: every step's shape and every parameter's, from the ops' own shape rules, with no
    numbers computed (and no numpy imported unless embeddings are loaded from a file). With ``sampling`` (a
    :class:`~explain.core.sampling.Sampling`), the generation's steps too."""
    return plan_request(make_request(model, weights=options.pop("weights", None), sampling=sampling, shipped=False,
                                     command="shapes", **options))


def plan_request(req: Request) -> Trace:
    """:func:`plan` of a request already made (``explain shapes``'s: its name checked, its checkpoint opened)."""
    cfg, inp = prepare(req)
    walk = tokenizer_walk(req, inp)
    if req.sampling is not None:
        check_generation(cfg, inp, req.sampling)
    return _record(cfg, inp, None, shape_only=True, sampling=req.sampling, training=req.training, walk=walk)


def estimate(cfg: Config, inp: Inputs, training: Any = None, sampling: Any = None) -> tuple[int, int]:
    """(parameter count, trace bytes) of the run, in closed form (:mod:`explain.engine.pricing`): plans of one and two
    layers (and, with ``sampling``, two to four new tokens) give the cost without planning the rest, so a
    10⁸-layer or 10⁶-token request is refused in milliseconds. With ``training`` the trace counts the
    objective, every gradient step and the SGD update."""

    def priced(c: Config, layers: int) -> tuple[int, int]:
        def plan(n: int, new: int | None) -> tuple[int, int]:
            s = None if new is None else replace(sampling, max_new_tokens=new)
            t = _record(replace(c, n_layers=n), inp, None, shape_only=True, sampling=s, training=training)
            return t.n_params, t.nbytes

        return price(plan, layers, None if sampling is None else sampling.max_new_tokens)

    dense = cfg.first_k_dense_replace if cfg.n_experts is not None else 0
    if not dense or cfg.n_layers <= 2:
        return priced(cfg, cfg.n_layers)
    # a mixture after dense first layers: two kinds of block, each priced per layer from plans of one and two
    moe, plain = replace(cfg, first_k_dense_replace=0), replace(cfg, n_experts=None, first_k_dense_replace=0)
    m1, m2, d1, d2 = priced(moe, 1), priced(moe, 2), priced(plain, 1), priced(plain, 2)
    return tuple(a + (cfg.n_layers - 1) * (b - a) + dense * ((d - c) - (b - a))  # type: ignore[return-value]
                 for a, b, c, d in zip(m1, m2, d1, d2))


def with_backward(trace: Trace, **training: Any) -> Trace:
    """``trace`` with its backward pass recorded after its steps, without running the forward again (the TUI's
    ``r`` key). ``training`` takes :func:`run`'s ``output_target``, ``grad_output``, ``lr`` (no ``lr`` here:
    an SGD step needs the model again). Refused before allocating if the gradients would not fit."""
    if trace.backward is not None:
        return trace
    spec = training_of({"backward": True, **training})
    assert spec is not None  # backward=True always asks for one
    if spec.lr is not None:
        raise UsageError("--lr re-runs the model; use explain.run(..., lr=...) instead")
    for shape_only in (True, False):  # the plan first: refuse before allocating
        rec = Recorder.resume(trace, shape_only)
        start, seed = objective(rec, spec)
        backward(rec, start, seed)
        out = rec.trace()
        if shape_only:
            check_memory(out, checkpoint=trace.weights.startswith(("checkpoint", "trained")))
    return out.keeps_run_of(trace)


def run(model: str, *, weights: str | dict | None = None, sampling: Any = None,
        on_tensor: Callable[[str, Any], None] | None = None, **options: Any) -> Trace:
    """Run ``model`` one operation at a time and return its :class:`Trace`.

    Options are the CLI's, named as in :data:`explain.core.options.OPTIONS` (``n_heads`` for ``--heads``). From
    Python, ``text`` may also be a list (a batch; texts of different lengths are right-padded, and the run then
    records a padding mask before each softmax and leaves padded targets out of the loss), ``target`` a list (one
    per text), ``tokens`` a list of ids, ``embeddings`` a (T, d) array or a (batch, T, d) batch, ``weights`` a
    dict of arrays, and ``checkpoint`` an opened checkpoint.
    With ``sampling`` (a :class:`~explain.core.sampling.Sampling`, see :func:`generate`), new tokens are appended
    after the forward pass. For the backward pass (:mod:`explain.engine.backward`): ``backward=True``,
    ``output_target`` / ``grad_output`` (an array or a file: the objective of a model without a loss) and
    ``lr`` (one SGD step, then the loss after it; ``optimizer="adamw"``: one AdamW step instead).
    ``on_tensor(name, value)`` is called with each parameter as the model declares it and each step as soon as
    it is computed (``--save`` writes them to its file while the next op runs, :class:`explain.io.save.NpzStream`).

    Which weights, as on the CLI: ``gpt`` opens the trained model that ships with explain
    (:mod:`explain.checkpoints.trained`) unless ``random_weights=True``, ``weights``, ``checkpoint`` or a size option
    (``d_model``, ``n_layers``, …) is given; random weights come from ``seed``.
    """
    check_keywords(on_tensor=on_tensor)  # the rest: make_request
    return run_request(make_request(model, weights=weights, sampling=sampling, **options), on_tensor)


def run_request(req: Request, on_tensor: Callable[[str, Any], None] | None = None) -> Trace:
    """:func:`run` of a request already made (:func:`explain.engine.ask.make_request`): its model name checked and
    its checkpoint opened, once."""
    from explain.engine.weights import (  # lazy: numpy off the shape path
        check_params,
        init_params,
        load_params,
    )

    training, sampling, weights, ck = req.training, req.sampling, req.weights, req.checkpoint
    cfg, inp = prepare(req)
    walk = tokenizer_walk(req, inp)
    if sampling is not None and training is not None:
        raise UsageError("--backward runs on the forward pass of the prompt; drop it to generate, or drop the "
                         "generation options to see the backward pass")
    if sampling is not None:  # the context after the price (a million new tokens: the estimate is the news),
        # unless the price's own small plans (up to 4 new tokens) would not fit in it
        check_generation(cfg, inp, sampling, context=inp.seq_len + 3 > cfg.n_ctx)
    # before planning every layer and every new token: priced in closed form from a few small plans
    check_memory(estimate(cfg, inp, training, sampling), gradients=training is not None,
                 new_tokens=None if sampling is None else sampling.max_new_tokens, checkpoint=ck is not None)
    if sampling is not None:
        check_generation(cfg, inp, sampling)
    planned = _record(cfg, inp, None, shape_only=True, sampling=sampling, training=training, walk=walk)
    if ck is not None and weights is None:
        params = check_params(to_layout(ck.params(), cfg.rope_layout), planned.specs, f"checkpoint '{ck.path}'")
    elif weights is None:
        params = init_params(planned.specs, cfg.seed)
    elif isinstance(weights, Mapping):
        params = check_params(dict(weights), planned.specs)
    else:
        params = load_params(weights, planned.specs)
    import numpy as np  # lazy: numpy off the shape path

    # Finite but huge weights (1e308) overflow to inf/nan in the run: the trace shows them as values, and
    # numpy's RuntimeWarnings (with its internal file paths) are not printed over the output.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        trace = _record(cfg, inp, params, shape_only=False, sampling=sampling, training=training, on_tensor=on_tensor,
                        walk=walk)
    check_finite(trace, params, getattr(cfg, "ln_eps", None))
    trace.weights = weights_label(ck, weights, cfg.seed, req.model.can("weights"), req.embeddings is not None)
    trace.unknown_words = list(ck.unknown) if ck is not None else []
    if ck is not None and weights is None:  # a GGUF says where each weight came from
        trace.origin = origins_in_layout(ck.weight_origins(params), cfg.rope_layout, cfg.head_dim)
    return trace


def generate(model: str = DEFAULT_MODEL, *, max_new_tokens: int | None = None, temperature: float | None = None,
             top_k: int | None = None, top_p: float | None = None, greedy: bool = False, ignore_eos: bool = False,
             sampling: Any = None, **options: Any) -> Trace:
    """Run the prompt through ``model`` (a gpt) and append new tokens one at a time; returns the trace, whose
    ``generation`` (:class:`~explain.trace.Generation`) names the steps that hold the new tokens (see
    :func:`generated_ids`).

    ``seed`` seeds only the draws, as on the CLI: gpt opens the trained model unless ``random_weights``,
    ``weights``, ``checkpoint`` or a size is given, and random weights are then seed 0's (:func:`run` seeds
    them). ``temperature=0`` is greedy decoding. The generation stops early once the end-of-text token is drawn (a
    checkpoint's ``eos_token_id``, or ``<eos>``), unless ``ignore_eos``. ``sampling``, settings already
    validated by :func:`explain.core.sampling.make_sampling` (the CLI's), stands for the five settings before it. The
    other options are :func:`run`'s."""
    check_keywords(model=model, greedy=greedy, ignore_eos=ignore_eos, sampling=sampling,
                   on_tensor=options.get("on_tensor"))  # the draws' numbers: make_sampling; the rest: make_request
    seed = options.pop("seed", None)  # the draws' seed only: the weights are the trained ones, or seed 0's
    if sampling is None:
        sampling = make_sampling(max_new_tokens, temperature, top_k, top_p, greedy, seed)
    weights, on_tensor = options.pop("weights", None), options.pop("on_tensor", None)
    req = make_request(model, weights=weights, sampling=sampling, command="generate", **options)
    if not ignore_eos:
        req = replace(req, sampling=replace(sampling, eos=eos_of(req)))
    return run_request(req, on_tensor)


def generated_ids(trace: Trace) -> list[list[int]]:
    """The new token ids of a generation's trace, one list per sequence of the batch."""
    assert trace.generation is not None, "not a generation's trace"
    names = trace.generation.steps
    return [[int(trace[n].output[b, 0]) for n in names] for b in range(trace[names[0]].shape[0])]


__all__ = ["run", "run_request", "plan", "plan_request", "generate", "generated_ids", "with_backward", "check_memory", "estimate"]
