"""A run's request (:class:`explain.engine.ask.Request`) checked before anything runs: the inputs and a validated
config (:func:`prepare`), what the checkpoint can serve (:func:`check_serves`), the token ids against the vocabulary
and a generation the model can run (:func:`check_generation`).
Each refuses a request with a one-line error naming the fix. :mod:`explain.engine.api` runs what passes."""

from __future__ import annotations

from typing import Any

from explain.checkpoints.protocol import Checkpoint
from explain.core.config import Config, config_for, with_vocab
from explain.core.errors import ConfigError, InputError, UsageError
from explain.core.inputs import Inputs, token_specs
from explain.core.limits import MAX_VOCAB
from explain.core.options import OPTION, flag
from explain.core.registry import able, quoted
from explain.core.words import EOS
from explain.engine.ask import Request, make_request
from explain.engine.prepare import prepare as prepare_inputs


def prepare_run(model: str, **options: Any) -> tuple[Config, Inputs]:
    """Inputs and a validated config with d_vocab set, for ``explain.run``'s keywords (a plan's: gpt is not
    opened as the trained model unless asked): :func:`prepare` of their :class:`~explain.engine.ask.Request`."""
    return prepare(make_request(model, shipped=False, **options))


def prepare(req: Request) -> tuple[Config, Inputs]:
    """Inputs and a validated config with d_vocab set, for the request ``req``."""
    entry, ck, options = req.model, req.checkpoint, dict(req.options)
    text, target, tokens, embeddings = req.text, req.target, req.tokens, req.embeddings
    texts = [text] if isinstance(text, str) else list(text or [])
    specs = token_specs(tokens)
    if specs is not None and not all(s.strip() for s in specs):
        raise UsageError("--tokens is empty; give ids such as 3,1,4, or drop --tokens")
    if ck is not None:  # its config.json sets every dimension, its tokenizer the ids
        check_serves(ck, embeddings, target, options)
        options = {**options, **with_assumed(ck.options, options)}
        if req.context is not None:  # a plan past its context: nothing of a rotary model is sized by it
            options["n_ctx"] = req.context
    defaulted = not texts and not specs and embeddings is None
    if defaulted:
        texts = entry.texts
    if target is None:
        target = entry.target
    inp = prepare_inputs(entry, texts, target, specs, embeddings, ck, defaulted)
    if inp.embeddings is not None:
        width = int(inp.embeddings.shape[-1])
        if options.get("d_model") is None:
            options["d_model"] = width
            if options.get("n_heads") is None and entry.heads is not None:
                options["n_heads"] = entry.heads
        elif options["d_model"] != width:
            raise InputError(f"the embeddings are {width} wide but --d-model is {options['d_model']}; "
                             f"drop --d-model or give embeddings with {options['d_model']} columns")
    cfg = config_for(entry, **options)
    cfg = with_vocab(cfg, inp.n_vocab_needed)
    check_ids(inp, cfg.d_vocab, None if ck else "--vocab")
    if inp.lengths is not None and not cfg.normalize == OPTION["normalize"].default:
        raise ConfigError(f"{flag('normalize')} {cfg.normalize} cannot skip padding (a hidden key must get weight 0, "
                          "and only softmax turns −inf into 0); give texts of the same length or drop it")
    longest = max(inp.seq_len, len((inp.target_ids or [[]])[0]))
    if longest > cfg.n_ctx:
        fix = "shorten the text" if ck else f"shorten the text or use {flag('n_ctx')} {longest}"
        where = ck.context_what if ck else "the context"
        raise InputError(f"the input has {longest} tokens but {where} is {cfg.n_ctx}; {fix}")
    return cfg, inp


def with_assumed(options: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's options, where the user's own value replaces one the file did not store (its ``assumed``
    keys: a GGUF's layer pattern, local θ, attention scale), which then is no longer said to be assumed."""
    assumed = [k for k in options.get("assumed", "").split(",") if k]
    mine = [k for k in assumed if given.get(k) is not None]
    if not mine:
        return options
    out = {k: v for k, v in options.items() if k not in mine}
    out["assumed"] = ",".join(k for k in assumed if k not in mine)
    return out


def check_ids(inp: Inputs, d_vocab: int | None, flag: str | None) -> None:
    """Refuse a token id outside the vocabulary, naming its size (a huge id never grows the vocabulary)."""
    ids = [i for b in (inp.ids or []) for i in b]
    top = max(ids, default=-1)
    if d_vocab is not None and top >= d_vocab:
        more = f", or --vocab {top + 1:,} or more" if flag and top < MAX_VOCAB else ""
        fix = (f"give ids below {d_vocab:,}{more}" if flag
               else f"give ids below {d_vocab:,} (the checkpoint's vocab_size)")
        raise InputError(f"token id {top:,} is outside the vocabulary of {d_vocab:,} tokens (ids 0–{d_vocab - 1:,}); "
                         + fix)


def check_serves(ck: Checkpoint, embeddings: Any, target: Any, options: dict[str, Any]) -> None:
    """Refuse a request the opened checkpoint cannot serve: it reads token inputs, and no option may contradict
    its config.json."""
    if embeddings is not None or target is not None:
        raise UsageError("a checkpoint reads token ids: use --text or --tokens, not --embeddings/--target")
    assumed = set(ck.options.get("assumed", "").split(","))
    for key, value in ck.options.items():
        given = options.get(key)
        if given is not None and given != value and key not in assumed:
            raise ConfigError(f"{flag(key)} {given} conflicts with the checkpoint's {key} = {value}; "
                              "drop the option (the checkpoint's config.json sets it)")


def check_generation(cfg: Config, inp: Inputs, sampling: Any, context: bool = True) -> None:
    """Refuse a generation the model cannot run: not a GPT, or (with ``context``) one that would run past the
    context."""
    if not cfg.spec.generates:
        raise UsageError(f"generation needs a decoder-only model that predicts the next token: use "
                         f"{quoted(able('generates'))}, not "
                         f"'{cfg.model}'")
    if inp.lengths is not None:  # a right-padded prompt would continue after its <pad>s
        raise InputError(f"the prompts of a generation must have the same number of tokens, got {inp.lengths}; "
                         "give texts of the same length, or generate from each text alone")
    last = inp.seq_len + sampling.max_new_tokens - 1  # positions the forward passes use
    if context and last > cfg.n_ctx:
        room = cfg.n_ctx - inp.seq_len + 1
        raise InputError(f"the prompt has {inp.seq_len} tokens and {sampling.max_new_tokens} new ones would "
                         f"need {last} positions, but the context is {cfg.n_ctx}; use --max-new-tokens {room} or "
                         "less, or a shorter prompt")


BACKWARD_OPTIONS = ("backward", "output_target", "grad_output", "lr", "optimizer")  # what engine.ask.training_of pops


def forward_only(options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``options`` without the backward pass's (a generation continues the forward pass alone: ``--backward``
    beside generation options is refused), and whether there were any."""
    kept = {k: v for k, v in options.items() if k not in BACKWARD_OPTIONS}
    return kept, any(options.get(k) for k in BACKWARD_OPTIONS)


def eos_of(req: Request) -> int | None:
    """The end-of-text token id: the checkpoint's ``eos_token_id`` (the first, if a list), else ``<eos>``."""
    if req.checkpoint is None:
        return EOS
    eos = req.checkpoint.config.get("eos_token_id")
    eos = eos[0] if isinstance(eos, list) and eos else eos
    return eos if isinstance(eos, int) and not isinstance(eos, bool) else None
