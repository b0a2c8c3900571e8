"""Next-token predictions read off a trace: for one position, the k most probable next tokens as words, with
their probabilities and log-probabilities, and the token that really comes next (in the text, the target, or
the one a generation drew) with its rank.

Wherever a trace has logits (``gpt``, the ``transformer``'s decoder, checkpoints, and each new token of a
generation), :func:`predictions` gives a :class:`Predictions`; the TUI pane, ``--plain`` and ``--json`` all
print this one value. It reads recorded values only, and needs numpy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from explain.core.names import gen_number, gen_step, lens_read
from explain.trace import Step, Trace

DEFAULT_K = 5


@dataclass(frozen=True)
class Candidate:
    """One vocabulary token at a position: its rank (1 = most probable), id, label, probability, log-prob."""

    rank: int
    id: int
    token: str
    prob: float
    logprob: float


@dataclass(frozen=True)
class Predictions:
    """The top-k next tokens at ``position`` of sequence ``batch``, from the logits step ``source``;
    ``actual`` is the token that comes next (``actual_is`` says how we know), or None at the end of a text."""

    source: str
    batch: int
    position: int
    top: list[Candidate]
    actual: Candidate | None
    actual_is: str
    after: str = ""  # the token at ``position``, the one the prediction follows
    used: float | None = None  # a drawn token's probability in the distribution the draw used (after T and
    # the filters), beside ``actual.prob``, the model's own (softmax of the logits, before them)
    used_by: str = ""  # how that distribution was made: "temperature 0.5, top-k 3"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def has_predictions(trace: Trace) -> bool:
    return "logits" in trace and trace["logits"].axes[-1:] == ("vocab",)


def source_of(trace: Trace, step: Step | None = None) -> tuple[str, int | None]:
    """The logits step that predicts at ``step`` (a generation's token n: its own logits; a read of the logit lens,
    ``lens.blocks.0.resid_mid.probs``: that read's own logits, not the model's final ones), and n or None."""
    own = lens_read(step.name) if step is not None and step.axes[-1:] == ("vocab",) else None
    if own is not None and own in trace:
        return own, None
    n = gen_number(step.name) if step is not None else None
    if n is None:
        return "logits", None
    return ("logits" if n == 0 else gen_step(n, "logits")), n


def top_k(values: Any, k: int) -> Any:
    """The indices of the ``k`` largest values, largest first, ties in index order: ``np.argsort(-values,
    kind="stable")[:k]`` without sorting all of them (a full sort of 50,257 log-probabilities at each of 1,024
    positions was 19 s of a GPT-2-size ``--json``): the values at least the k-th largest, then those sorted."""
    import numpy as np  # lazy: numpy off the shape path

    neg = -np.asarray(values)
    if k >= neg.size:
        return np.argsort(neg, kind="stable")[:k]
    kth = np.partition(neg, k - 1)[k - 1]
    if np.isnan(kth):  # fewer than k numbers: NaN sorts last, as the full sort puts it
        return np.argsort(neg, kind="stable")[:k]
    near = np.flatnonzero(neg <= kth)  # every value tied with the k-th too, in index order
    return near[np.argsort(neg[near], kind="stable")][:k]


def predictions(trace: Trace, step: Step | None = None, position: int = -1, batch: int = 0,
                k: int = DEFAULT_K) -> Predictions:
    """The top-k next tokens at ``position`` (−1: the last) for the logits that ``step`` belongs to."""
    import numpy as np  # lazy: numpy off the shape path

    from explain.ops.kernels import log_softmax  # lazy: numpy off the shape path

    name, n = source_of(trace, step)
    logits = np.asarray(trace[name].output)
    if logits.ndim == 2:  # the transformer's decoder: (T, V), no batch
        logits = logits[None]
    T = logits.shape[-2]
    pos = position % T
    if n is not None:  # token 0 is chosen at the prompt's last position; a later one's logits hold one position
        pos = 0 if n > 0 else T - 1
    lp = log_softmax(logits[batch, pos])
    vocab = trace.labels.get("vocab") or []

    def cand(i: int) -> Candidate:
        rank = 1 + int((lp > lp[i]).sum())
        return Candidate(rank, int(i), vocab[i] if i < len(vocab) else f"#{i}", float(np.exp(lp[i])), float(lp[i]))

    order = top_k(lp, k)
    actual, how = _actual(trace, n, batch, pos)
    absolute = _position_of(trace, n) if n else pos
    used, used_by = _used(trace, n or 0, batch, actual) if how == "drawn" else (None, "")
    return Predictions(name, batch, absolute, [cand(i) for i in order], None if actual is None else cand(actual),
                       how, _token_at(trace, n, batch, pos, vocab), used, used_by)


def _used(trace: Trace, n: int, batch: int, token: int | None) -> tuple[float | None, str]:
    """The probability drawn token n had in the distribution its draw used (``gen.n.probs``: after the
    temperature and the filters), and what was done to the model's distribution to make it."""
    name = gen_step(n, "probs")
    probs = trace[name] if name in trace else None
    if token is None or probs is None or probs.output is None:
        return None, ""
    how = trace.generation.sampling_of(n).describe() if trace.generation is not None else ""
    return float(probs.output[batch, 0, token]), how


def _token_at(trace: Trace, n: int | None, batch: int, pos: int, vocab: list[str]) -> str:
    """The label of the token at the position that predicts: in the input, or the one drawn before token n."""
    if n:
        i = int(trace[gen_step(n - 1, "next")].output[batch, 0])
    elif "tokens" in trace:
        ids = trace["tokens"].output
        row = ids[batch] if ids.ndim == 2 else ids
        i = -1 if _decoder(trace) else int(row[pos])
    else:
        i = -1
    if _decoder(trace):
        tgt = trace.labels.get("tgt") or []
        return tgt[pos] if pos < len(tgt) else ""
    return vocab[i] if 0 <= i < len(vocab) else ""


def _decoder(trace: Trace) -> bool:
    """The logits are an encoder-decoder's: they predict the target text, not the input's next token."""
    return trace.config.spec.target is not None


def _position_of(trace: Trace, n: int) -> int:
    """The position whose logits chose new token n: the prompt's last, then one further per token."""
    return trace["logits"].shape[-2] - 1 + n


def _actual(trace: Trace, n: int | None, batch: int, pos: int) -> tuple[int | None, str]:
    """The token that comes after ``pos``, and how we know it."""
    if n is not None:
        return int(trace[gen_step(n, "next")].output[batch, 0]), "drawn"
    if "targets" in trace and _decoder(trace):
        targets = trace["targets"].output
        row = targets[batch] if targets.ndim == 2 else targets  # a batch: this item's targets
        if pos < len(row) and int(row[pos]) >= 0:  # a padded position's target is ignore_index (-100): none
            return int(row[pos]), "target"
        return None, ""
    if "tokens" in trace:
        ids = trace["tokens"].output
        row = ids[batch] if ids.ndim == 2 else ids
        if pos + 1 < len(row):
            return int(row[pos + 1]), "next in the text"
    first = gen_step(0, "next")
    if first in trace and pos == trace["logits"].shape[-2] - 1:
        return int(trace[first].output[batch, 0]), "drawn"
    return None, ""


def all_predictions(trace: Trace, k: int = DEFAULT_K) -> list[Predictions]:
    """Predictions at every position of every sequence of the forward pass, then at each generated token."""
    if not has_predictions(trace):
        return []
    out = []
    shape = trace["logits"].shape
    batch = shape[0] if len(shape) == 3 else 1
    for b in range(batch):
        out += [predictions(trace, None, t, b, k) for t in range(shape[-2])]
        if trace.generation is not None:
            out += [predictions(trace, trace[name], -1, b, k) for name in trace.generation.steps[1:]]
    return out
