"""The masks beside the causal one: the padding mask, which hides the ``<pad>`` keys of a right-padded batch, and
the sliding window, which hides the keys too far back (Mistral; Gemma's local layers).

The padding mask is a step of its own, apart from the causal mask (:class:`explain.ops.elementwise.Mask`), because the two
hide different cells for different reasons: the causal mask hides the future (the same triangle in every
sequence), the padding mask hides the keys that are not text at all (whole columns, per sequence). Its second
input is the (batch, keys) padding indicator the run records once (1 where a key is ``<pad>``), as torch's
``key_padding_mask``.

The window mask (``window_mask``) is a step of its own too: the causal mask hid the future; the window hides the
distant past, key j of query i when i − j ≥ window (transformers' ``sliding_window_overlay``), so each query sees
the window's most recent keys, itself included. A cell's explanation says which rule hid it and why.
"""

from __future__ import annotations

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, idx, num, register


@register
class PadMask(Op):
    """scores (B, [h,] T, S) and key padding (B, S) → the scores with every padded key's column at −inf."""

    kind = "pad_mask"
    helpers = ("padding_mask",)
    default_note = ("Padding mask: the shorter texts of the batch were filled up with <pad> tokens. No query "
                    "may look at a <pad> key, so those columns become −inf and softmax gives them weight 0.")

    def shape(self, scores, pad, **attrs):
        if len(pad) != 2 or len(scores) < 3 or pad[0] != scores[0] or pad[1] != scores[-1]:
            raise ShapeError(f"padding mask {sr.fmt_shape(pad)} must be (batch, keys) of the scores "
                             f"{sr.fmt_shape(scores)}")
        return tuple(scores)

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} + P,  P[b, …, j] = −inf if key j of sequence b is <pad> else 0"

    def signature(self, shapes, out, **attrs):
        return f"{sr.fmt_shape(shapes[0])} + padding {sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def source(self, out, ins, **attrs) -> str:
        return f"padding_mask({ins[0]}, {ins[1]})"

    def feeds(self, index, inputs, **attrs):
        return [tuple(index), (index[0], index[-1])]  # the score, and whether key j of sequence b is <pad>

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        scores, pad = inputs
        b, i, j = index[0], index[-2], index[-1]
        before = float(scores[index])
        if pad[b, j]:
            why = [f"padding: key {j} of sequence {b} is padding, filler after the end of the text, not a word",
                   f"{num(before)} → −inf, so softmax will give it weight exp(−inf) = 0"]
        elif before == float("-inf"):
            why = [f"key {j} is a real token; the score was already −inf (hidden by the causal mask)", "kept: −inf"]
        else:
            why = [f"key {j} of sequence {b} is a real token: not padding", f"kept: {num(before)}"]
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: sequence {b}, query {i}, "
                               f"key {j}", lines=why)

    # -- backward: a padded key's score was replaced by a constant (−inf), so no gradient reaches it ----------
    differentiable = (0,)  # the padding indicator is data, not a parameter
    vjp_helpers = ("padding_mask_backward",)
    vjp_note = ("A padded key's score was replaced by −inf, a constant: the loss does not depend on it, so no "
                "gradient flows to it.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out}[b, …, j] = 0 if key j of sequence b is <pad> else {syms.ins[0]}[b, …, j]"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"padding_mask_backward({g}, {ins[1]})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        padded = bool(inputs[1][index[0], index[-1]])
        return [None if padded else tuple(index), None, (index[0], index[-1]), None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        b, j = index[0], index[-1]
        if inputs[1][b, j]:
            lines = [f"key {j} of sequence {b} is padding: this score was −inf",
                     "no gradient flows to it: the loss does not depend on it at all, so its gradient is 0"]
        else:
            lines = [f"key {j} of sequence {b} is a real token: the score was kept, so its gradient passes "
                     f"through: {num(grad[index])}"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: sequence {b}, key {j}",
                               lines=lines)


@register
class WindowMask(Op):
    """scores (…, T, S) → the scores with every key at window or more positions before its query at −inf."""

    kind = "window_mask"
    helpers = ("window_mask",)
    vjp_helpers = ("window_mask",)
    default_note = ("Sliding window: this layer is local. A query may look only at the most recent keys, itself "
                    "included; a key that far back or further gets −inf, so softmax gives it weight 0. Keys in the "
                    "future were hidden by the causal mask already.")
    vjp_note = ("A key outside the window had its score replaced by −inf, a constant: the loss does not depend on "
                "it, so no gradient flows to it.")

    def formula(self, syms: Syms, window: int = 1, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} + W,  W[i, j] = −inf if i − j ≥ {window} (the window) else 0"

    def signature(self, shapes, out, window: int = 1, **attrs):
        return f"{sr.fmt_shape(shapes[0])} + window {window} → {sr.fmt_shape(out)}"

    def source(self, out, ins, window: int = 1, **attrs) -> str:
        return f"window_mask({ins[0]}, {int(window)})"

    def explain(self, index, inputs, output, syms: Syms, window: int = 1, **attrs) -> CellExplanation:
        i, j = index[-2], index[-1]
        before = float(inputs[0][index])
        if j > i:
            why = [f"key {j} comes after query {i}: the causal mask hid it already", f"kept: {num(before)}"]
        elif i - j >= window:
            why = [f"query {i} − key {j} = {i - j} ≥ window {window}: the key is outside the window",
                   f"{num(before)} → −inf, so softmax will give it weight exp(−inf) = 0"]
        else:
            why = [f"query {i} − key {j} = {i - j} < window {window}: inside the window",
                   f"kept: {num(before)}"]
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: query {i}, key {j}", lines=why)

    def vjp_formula(self, wrt, syms: Syms, window: int = 1, **attrs) -> str:
        return f"{syms.out}[i, j] = 0 if i − j ≥ {window} else {syms.ins[0]}[i, j]"

    def vjp_source(self, wrt, g, ins, out, window: int = 1, **attrs) -> str:
        return f"window_mask({g}, {int(window)}, fill=0.0)"

    def vjp_feeds(self, wrt, index, g, inputs, output, window: int = 1, **attrs):
        hidden = index[-2] - index[-1] >= window
        return [None if hidden else index] + [None] * (len(inputs) + 1)

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, window: int = 1,
                    **attrs) -> CellExplanation:
        i, j = index[-2], index[-1]
        if i - j >= window:
            lines = [f"query {i} − key {j} = {i - j} ≥ window {window}: this score was −inf",
                     "no gradient flows to it: the loss does not depend on it at all, so its gradient is 0"]
        else:
            lines = [f"query {i} − key {j} = {i - j} < window {window}: the score was kept, so its gradient passes "
                     f"through: {num(grad[index])}"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: query {i}, key {j}", lines=lines)
