"""The shape rules of numpy's operators, on plain tuples (no numpy is imported here).

These are the one place the project states how ``@``, broadcasting, transpose, reshape and the reductions
turn input shapes into an output shape. The ops (``explain.ops``) use them for their shape signatures and
for shape-only runs; the expression checker (``explain check``) uses them for every sub-expression. Each
rule raises :class:`ShapeError` with a message that names both shapes and the rule that failed.
"""

from __future__ import annotations

from math import prod

from explain.core.errors import ShapeError

Shape = tuple[int, ...]


def fmt_shape(shape: Shape) -> str:
    """``(4, 64)``; a 1-tuple prints as ``(4,)`` like numpy."""
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast(a: Shape, b: Shape) -> Shape:
    """numpy broadcasting: align from the right; each pair of sizes must be equal or one of them 1."""
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            axis = i - n
            raise ShapeError(
                f"shapes {fmt_shape(a)} and {fmt_shape(b)} do not broadcast: axis {axis} has sizes {x} and {y}, "
                "and broadcasting needs them equal or one of them 1"
            )
    return tuple(out)


def matmul(a: Shape, b: Shape) -> Shape:
    """numpy's ``a @ b``: inner sizes must agree; 1-D operands are promoted and the added axis dropped;
    leading (batch) axes broadcast."""
    if len(a) == 0 or len(b) == 0:
        raise ShapeError(f"matmul needs arrays, not scalars: got {fmt_shape(a)} @ {fmt_shape(b)}; use * for scaling")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise ShapeError(
            f"matmul inner dimensions differ: {fmt_shape(a)} @ {fmt_shape(b)} needs the last size of the left "
            f"({a2[-1]}) to equal the second-to-last of the right ({b2[-2]})"
        )
    try:
        batch = broadcast(a2[:-2], b2[:-2])
    except ShapeError:
        raise ShapeError(
            f"matmul batch axes do not broadcast: {fmt_shape(a)} @ {fmt_shape(b)} has leading axes "
            f"{fmt_shape(a2[:-2])} and {fmt_shape(b2[:-2])}"
        ) from None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def normalize_axis(axis: int, ndim: int) -> int:
    """A possibly negative axis as a positive index, or a ShapeError naming the valid range."""
    if not -ndim <= axis < ndim:
        raise ShapeError(f"axis {axis} is out of range for an array of {ndim} dimensions (valid: {-ndim} to {ndim - 1})")
    return axis % ndim


def transpose(a: Shape, axes: tuple[int, ...] | None = None) -> Shape:
    """``a.T`` (all axes reversed) or ``np.transpose(a, axes)``."""
    if axes is None:
        return tuple(reversed(a))
    if len(axes) != len(a):
        raise ShapeError(f"transpose of a {len(a)}-D array {fmt_shape(a)} needs {len(a)} axes, got {len(axes)}")
    norm = [normalize_axis(x, len(a)) for x in axes]
    if sorted(norm) != list(range(len(a))):
        raise ShapeError(f"transpose axes {tuple(axes)} are not a permutation of 0..{len(a) - 1}")
    return tuple(a[i] for i in norm)


def swapaxes(a: Shape, i: int, j: int) -> Shape:
    """``np.swapaxes(a, i, j)``."""
    i, j = normalize_axis(i, len(a)), normalize_axis(j, len(a))
    out = list(a)
    out[i], out[j] = out[j], out[i]
    return tuple(out)


def reshape(a: Shape, new: tuple[int, ...]) -> Shape:
    """``a.reshape(new)`` with at most one -1; the total size must be kept."""
    total = prod(a)
    if sum(1 for d in new if d == -1) > 1:
        raise ShapeError(f"reshape to {fmt_shape(new)}: only one dimension may be -1")
    if any(d < -1 for d in new):
        raise ShapeError(f"reshape to {fmt_shape(new)}: sizes must be positive or -1")
    if -1 in new:
        known = prod(d for d in new if d != -1)
        if known == 0 or total % known:
            raise ShapeError(f"cannot reshape {fmt_shape(a)} ({total} elements) to {fmt_shape(new)}: "
                             f"{total} is not a multiple of {known}")
        new = tuple(total // known if d == -1 else d for d in new)
    if prod(new) != total:
        raise ShapeError(f"cannot reshape {fmt_shape(a)} ({total} elements) to {fmt_shape(new)} ({prod(new)} elements)")
    return tuple(new)


def reduce(a: Shape, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Shape:
    """``sum``/``mean``/``max`` over ``axis`` (None: all axes), with ``keepdims``."""
    if axis is None:
        axes = set(range(len(a)))
    else:
        seq = axis if isinstance(axis, tuple) else (axis,)
        axes = {normalize_axis(x, len(a)) for x in seq}
        if len(axes) != len(seq):
            raise ShapeError(f"axis {axis} repeats an axis")
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(a))
    return tuple(d for i, d in enumerate(a) if i not in axes)


def concatenate(shapes: list[Shape], axis: int = 0) -> Shape:
    """``np.concatenate(shapes, axis)``: same number of dimensions, equal sizes off the axis."""
    if not shapes:
        raise ShapeError("concatenate needs at least one array")
    first = shapes[0]
    if len(first) == 0:
        raise ShapeError("concatenate cannot join scalars (0-D arrays); use stack")
    ax = normalize_axis(axis, len(first))
    for s in shapes[1:]:
        if len(s) != len(first):
            raise ShapeError(f"concatenate needs arrays of one rank: {fmt_shape(first)} and {fmt_shape(s)}")
        for i, (x, y) in enumerate(zip(first, s)):
            if i != ax and x != y:
                raise ShapeError(f"concatenate along axis {axis}: {fmt_shape(first)} and {fmt_shape(s)} differ on axis {i} ({x} vs {y})")
    return first[:ax] + (sum(s[ax] for s in shapes),) + first[ax + 1:]


def stack(shapes: list[Shape], axis: int = 0) -> Shape:
    """``np.stack(shapes, axis)``: all shapes equal; a new axis of len(shapes)."""
    if not shapes:
        raise ShapeError("stack needs at least one array")
    first = shapes[0]
    for s in shapes[1:]:
        if s != first:
            raise ShapeError(f"stack needs arrays of one shape: {fmt_shape(first)} and {fmt_shape(s)}")
    ax = normalize_axis(axis, len(first) + 1)
    return first[:ax] + (len(shapes),) + first[ax:]
