"""The residual stream of a recorded run, as the interpretability tools read it: which steps hold it after each
block and each attention, the final norm and the unembedding that turn it into logits, and the refusal of a model
whose stream is not a plain sum (post-LN: it renormalises after every add).

Also what every tool needs around that: one word as one token id (:func:`word_id`), a recorder that goes on after
a trace keeping its labels (:func:`resume`), a recorded step replayed on other inputs (:func:`replay`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explain.checkpoints.protocol import TextTokenizer
from explain.core.errors import InputError, UsageError
from explain.core.registry import Model, able, quoted
from explain.core.words import Tokenizer
from explain.engine.ask import Request, make_request
from explain.interp import names
from explain.trace import Step, Trace
from explain.trace.recorder import Recorder, Ref

WHY = "the lens, attribution and patching read the stream as that sum, which needs a pre-norm model"


@dataclass(frozen=True)
class Stream:
    """Where a pre-norm run keeps its residual stream."""

    n_layers: int
    first: str  # the residual block 0 reads: blocks.0.resid_pre (token + position embeddings), or embed (llama)
    norm: Step  # the final norm: its first input is the last residual
    logits: Step  # the unembedding: its first input is the norm's output

    @property
    def centre(self) -> bool:
        """Whether the final norm subtracts the mean (layer norm) or only divides (RMS norm)."""
        return self.norm.op == "layer_norm"

    def block_inputs(self) -> list[str]:
        """The residual each block reads: the first, then each earlier block's output (TransformerLens's
        ``blocks.i.hook_resid_pre``; the run records it once, as ``blocks.{i-1}.resid_post``)."""
        return [self.first] + [names.resid_post(i) for i in range(self.n_layers - 1)]

    def points(self) -> list[tuple[str, str]]:
        """(label, step name) of every place the lens reads: ``0`` the embeddings, ``k+attn`` after block k's
        attention, ``k`` after k blocks; the last is what the final norm reads."""
        out = [("0", self.first)]
        for i in range(self.n_layers):
            out += [(f"{i}+attn", names.resid_mid(i)), (str(i + 1), names.resid_post(i))]
        return out


def check_entry(entry: Model) -> None:
    """Refuse, in one line that says why, a model whose residual stream is not a sum (the registry's ``pre_norm``
    capability): a request's entry, or a recorded run's (``trace.config.spec``)."""
    if entry.can("pre_norm"):
        return
    fix = f"{WHY}: use {quoted(able('pre_norm'))}"
    if entry.can("blocks"):
        raise UsageError(f"'{entry.name}' is post-LN: it renormalises the residual after every add, so its stream is "
                         f"not a sum of what each layer wrote; {fix}")
    raise UsageError(f"'{entry.name}' has no residual stream (blocks and a final norm) to read; {fix}")


def check_one_text(options: dict[str, Any], what: str) -> None:
    """Refuse a batch (``--text`` given more than once): the tools read one text, and a shorter text's last
    position in a padded batch is ``<pad>``."""
    texts = options.get("text")
    if texts is not None and not isinstance(texts, str) and len(texts) > 1:
        raise UsageError(f"--text is given {len(texts)} times; {what} reads one text (in a batch, a shorter "
                         "text's last position is <pad>): give --text once")


def stream_of(trace: Trace) -> Stream:
    """The stream of a recorded run (refused as :func:`check_entry` says for a post-LN or block-less model)."""
    check_entry(trace.config.spec)
    first = trace[names.resid_mid(0)].inputs[0]  # resid_mid = the residual block 0 read + its attention
    return Stream(trace.config.n_layers, first, trace["ln_final"], trace["logits"])


def resume(trace: Trace, shape_only: bool = False) -> Recorder:
    """A recorder that goes on after ``trace`` (its steps are not run again), keeping every label."""
    rec = Recorder.resume(trace, shape_only)
    rec.batch_labels = dict(trace.batch_labels)
    return rec


def finish(rec: Recorder, trace: Trace) -> Trace:
    """The recorded trace: the same run as ``trace``, so the same header (which weights, the <unk> words)."""
    return rec.trace().keeps_run_of(trace)


def ref(rec: Recorder, name: str) -> Ref:
    """A step or a parameter of the run being recorded, as a value to compute with."""
    return rec.ref(name) if rec.recorded(name) else rec.reuse(name)


def replay(rec: Recorder, step: Step, name: str, subst: dict[str, Ref]) -> Ref:
    """Record ``step``'s operation again as ``name`` (in the current scope), with the inputs named in ``subst``
    replaced: the final norm and the unembedding applied to an earlier residual."""
    ins = [subst[n] if n in subst else ref(rec, n) for n in step.inputs]
    return rec.op(step.op, name, *ins, sym=step.syms.out, note=step.note, **step.attrs)


def word_id(word: str, tokenizer: TextTokenizer, what: str = "--word") -> int:
    """The one token id of ``word``: a word the tokenizer splits, or does not know, is refused with its tokens."""
    if not word:
        raise UsageError(f"{what} is empty; give one token of the vocabulary, e.g. {what} ' Paris'")
    ids = tokenizer.encode(word)
    unknown = bool(tokenizer.unknown)  # a word-level vocabulary's: it became <unk>
    if len(ids) == 1 and not unknown:
        return int(ids[0])
    if unknown or not ids:
        import difflib  # lazy: only for a refusal

        near = difflib.get_close_matches(word.strip(), [str(w) for w in tokenizer.vocab_labels()], n=1)
        hint = f"did you mean {near[0]!r}? or " if near else ""
        raise InputError(f"{what} {word!r} is not in the vocabulary; {hint}give a word of the text or of the "
                         "built-in words (explain run MODEL --plain shows them)")
    shown = " + ".join(repr(tokenizer.label(i)) for i in ids)
    hint = "" if word.startswith(" ") else f", or try {' ' + word!r} (a leading space is part of a byte-level token)"
    raise InputError(f"{what} {word!r} is {len(ids)} tokens ({shown}); give one token of the vocabulary{hint}")


def read_position(trace: Trace, word: int | None, position: int | None, label: str = "") -> tuple[int, str]:
    """The position whose next word a tool reads, and a line saying why (or ""). ``position`` given: that one
    (refused outside the text). Otherwise, when the text holds ``word`` after its first token, the last position
    where it is the next token (a question about the text: after 'The cat is', 'happy'?), the others named; else
    the last position (what comes after the text)."""
    T = trace["logits"].shape[-2]
    if position is not None:
        if not -T <= position < T:
            raise UsageError(f"--position {position} is outside the {T} positions of the text; give 0–{T - 1} "
                             "(or −1, the last)")
        return position % T, ""
    ids = trace["tokens"].output if "tokens" in trace else None
    row = [] if ids is None or word is None else [int(i) for i in (ids[0] if ids.ndim == 2 else ids)]
    at = [t - 1 for t, i in enumerate(row) if i == word and t > 0]
    if not at:
        return T - 1, ""
    pos = at[-1]
    tokens = list(trace.labels.get("pos") or [])
    shown = f" ({tokens[pos]!r})" if pos < len(tokens) else ""
    also = (f"; it is also next after position{'s' if len(at) > 2 else ''} "
            f"{', '.join(str(p) for p in at[:-1])}" if len(at) > 1 else "")
    return pos, (f"reading position {pos}{shown}, where {label!r} is the next token in the text{also}; "
                 "--position chooses another")


def request_for(model: str, options: dict[str, Any], what: str, command: str) -> Request:
    """The request of ``what``'s run (the logit lens, attribution): one text, the model's name checked and a
    checkpoint opened once (:func:`explain.engine.ask.make_request`), a model whose stream is not a sum refused
    before anything runs; an option ``command`` (lens, attribute) cannot use is refused (:mod:`explain.core.takes`)."""
    check_one_text(options, what)
    req = make_request(model, command=command, **options)
    check_entry(req.model)
    return req


def tokenizer_of(req: Request) -> TextTokenizer:
    """The tokenizer the run of ``req`` reads: its checkpoint's (the trained model's too: its words are not the
    text's), else the word-level one over the run's texts (the model's own when none and no ids are given)."""
    if req.checkpoint is not None:
        return req.checkpoint
    texts = [req.text] if isinstance(req.text, str) else list(req.text or [])
    if not texts and req.tokens is None:
        texts = list(req.model.texts)
    return Tokenizer(texts)
