"""Op kinds at the start of a model: given inputs, embedding lookups and positions (the loss at its end is in
:mod:`explain.ops.objective`)."""

from __future__ import annotations

import math

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.core.names import is_text_axis
from explain.ops.base import CellExplanation, Op, Syms, idx, num, register, token
from explain.ops.products import explain_pad_back, pad_back_source


@register
class Input(Op):
    """A value given to the run (token ids, embeddings, targets): no inputs, its value is the output."""

    kind = "input"
    default_note = "Given as input."
    reads_vocab = True

    def shape(self, shape: tuple = (), **attrs):
        return tuple(shape)

    def axes(self, axes: tuple = (), **attrs):
        return tuple(axes)

    def compute(self, value=None, **attrs):
        return value

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} (given)"

    def signature(self, shapes, out, **attrs) -> str:
        return f"given → {sr.fmt_shape(out)}"

    def source(self, out, ins, **attrs) -> str:
        return out  # the exporter writes the value as a literal or loads it from the sidecar

    def explain(self, index, inputs, output, syms: Syms, vocab: list[str] | None = None, given_by: str | None = None,
                **attrs) -> CellExplanation:
        value = output[index]
        # integer inputs are token ids (the tokens, the targets): name each by its word; a text's bytes or code
        # points (the tokenizer's steps) by what they are
        axes = attrs.get("axes") or ("",)
        if output.dtype.kind in "iu" and is_text_axis(axes[-1]):
            v = int(value)
            shown = f"byte 0x{v:02x}" if axes[-1].startswith("bytes:") else f"U+{v:04X} {chr(v)!r}"
        else:
            shown = token(int(value), vocab) if output.dtype.kind in "iu" else num(value)
        # ``given_by``: what computed a value recorded whole (the loss after an update: a second forward pass)
        title = f"{syms.out}{idx(index)}: {given_by}" if given_by else f"{syms.out}{idx(index)} is given as input"
        return CellExplanation(index, float(value), title,
                               lines=[f"{syms.out}{idx(index)} = {shown}"],
                               shown=shown if output.dtype.kind in "iu" else None)


@register
class Embed(Op):
    """Embedding lookup: token id t selects row t of W_E."""

    kind = "embed"
    join = " → rows of "
    default_note = "Each token id picks its row of the embedding matrix W_E: a learned vector per word."
    reads_vocab = True

    def shape(self, ids, w, **attrs):
        if len(w) != 2:
            raise ShapeError(f"an embedding matrix must be (vocab, d_model), got {sr.fmt_shape(w)}")
        return tuple(ids) + (w[1],)

    def axes(self, ids, w, **attrs):
        return tuple(ids) + (w[-1],)

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out}[t] = {syms.ins[1]}[token t]"

    def signature(self, shapes, out, **attrs):
        return f"ids {sr.fmt_shape(shapes[0])}, {syms_w(shapes)} → {sr.fmt_shape(out)}"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[1]}[{ins[0]}]"

    def feeds(self, index, inputs, **attrs):
        ids, _ = inputs
        *pos, j = index
        return [tuple(pos), (int(ids[tuple(pos)]), j)]  # the token id, then its row of W_E

    def explain(self, index, inputs, output, syms: Syms, vocab: list[str] | None = None,
                **attrs) -> CellExplanation:
        *pos, j = index
        tok = self.feeds(index, inputs)[1][0]
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[1]}[{tok}, {j}]",
                               lines=[f"position {idx(tuple(pos))} holds token {token(tok, vocab)}",
                                      f"row {tok} of {syms.ins[1]}, column {j} = {num(output[index])}"])

    # -- backward: token ids are integers (no gradient); row t of W_E sums the gradients of the positions
    # that hold token t, and rows of tokens not in the input get 0
    differentiable = (1,)
    vjp_helpers = ("embed_backward",)

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out}[v] = Σ over positions t holding token v of {syms.ins[0]}[t]"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"embed_backward({g}, {ins[0]}, {ins[1]}.shape[0])"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        import numpy as np  # lazy: numpy off the shape path

        v, j = index
        where = np.nonzero(np.asarray(inputs[0]) == v)  # the positions that hold token v
        fed = (*where, j) if where[0].size else None
        return [fed, where, None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        ids = np.asarray(inputs[0])
        v, j = index
        where = [tuple(int(i) for i in p) for p in np.argwhere(ids == v)]
        title = f"{syms.out}{idx(index)}: row {v} (token id {v}), column {j}"
        if not where:
            return CellExplanation(index, float(grad[index]), title, lines=[
                f"token id {v} does not occur in the input: this row was never looked up, gradient 0"])
        rows = [(idx(p), float(g[p + (j,)])) for p in where]
        return CellExplanation(index, float(grad[index]), title, ("position", f"{syms.ins[0]}[t, {j}]"), rows,
                               [f"token id {v} is at {len(where)} position(s); each lookup copied this row, so the "
                                "gradients add", f"sum = {num(grad[index])}"])


def syms_w(shapes) -> str:
    """The embedding matrix's shape, for signatures."""
    return f"W {sr.fmt_shape(shapes[1])}"


@register
class PosEmbed(Op):
    """Learned positions: rows ``start`` … ``start + n − 1`` of W_pos (position p uses row p); ``start`` is the
    new position when a generation runs one new token on the key/value cache."""

    kind = "pos_embed"
    default_note = "Learned positional embedding: position p uses row p of W_pos, the same for every sentence."

    def shape(self, w, n: int = 1, start: int = 0, **attrs):
        if start + n > w[0]:
            raise ShapeError(f"{start + n} positions but W_pos has only {w[0]} rows (the context); shorten the "
                             f"input or raise --context to {start + n}")
        return (n, w[1])

    def axes(self, w, **attrs):
        return ("pos", w[-1])

    def formula(self, syms: Syms, n: int = 1, start: int = 0, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]}[{start}:{start + n}]"

    def source(self, out, ins, n: int = 1, start: int = 0, **attrs) -> str:
        return f"{ins[0]}[{start}:{start + n}]" if start else f"{ins[0]}[:{n}]"

    def feeds(self, index, inputs, start: int = 0, **attrs):
        return [(start + index[0], index[1])]  # position p uses row p

    def explain(self, index, inputs, output, syms: Syms, start: int = 0, **attrs) -> CellExplanation:
        p, j = self.feeds(index, inputs, start=start)[0]
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}[{p}, {j}]",
                               lines=[f"position {p} uses row {p} of {syms.ins[0]}: {num(output[index])}"])

    # -- backward: rows 0 … T−1 of W_pos get the gradient at their position; later rows get 0 -----------------
    vjp_helpers = ("pad_back",)

    def vjp_formula(self, wrt, syms: Syms, n: int = 1, **attrs) -> str:
        return f"{syms.out}[0:{n}] = {syms.ins[0]},  {syms.out}[{n}:] = 0"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return pad_back_source(g, ins[0])

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index if all(i < n for i, n in zip(index, g.shape)) else None, None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, n: int = 1, **attrs) -> CellExplanation:
        return explain_pad_back(index, grad, syms, index[0] < n)


@register
class Sinusoid(Op):
    """Sinusoidal positional encoding: fixed, not learned (Vaswani et al. 2017, §3.5)."""

    kind = "sinusoid"
    helpers = ("sinusoidal",)
    default_note = ("Sinusoidal positional encoding: each position gets a fixed pattern of sines and cosines of "
                    "different wavelengths, so the model can tell positions apart and compare them.")

    def shape(self, n: int = 1, d: int = 1, **attrs):
        return (n, d)

    def axes(self, **attrs):
        return ("pos", "d_model")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out}[p, 2i] = sin(p / 10000^(2i/d)),  {syms.out}[p, 2i+1] = cos(p / 10000^(2i/d))"

    def source(self, out, ins, n: int = 1, d: int = 1, **attrs) -> str:
        return f"sinusoidal({n}, {d})"

    def explain(self, index, inputs, output, syms: Syms, n: int = 1, d: int = 1, **attrs) -> CellExplanation:
        p, j = index
        i2 = j - j % 2
        angle = p / 10000 ** (i2 / d)
        fn = "sin" if j % 2 == 0 else "cos"
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {fn}({p} / 10000^({i2}/{d}))",
                               lines=[f"angle = {p} / 10000^({i2}/{d}) = {num(angle)}",
                                      f"{fn}({num(angle)}) = {num(getattr(math, fn)(angle))}"])
