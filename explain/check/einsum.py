"""The einsum form: ``"batch seq d_model, d_model d_head -> batch seq d_head"``.

Dimension names are separated by spaces (so they can be words); operands are separated by commas. An operand
may carry a label, ``"x: batch seq d_model"``, whose ``--shape x=...`` binds its names to sizes; otherwise the
sizes come from ``--dim``. A name bound to two sizes, an output name no input has, and a contracted name whose
sizes differ are :class:`CheckShapeError` s with a caret under the offending name.
"""

from __future__ import annotations

import re

from explain.check.errors import CheckShapeError, caret_lines
from explain.check.parse import Bindings, check_length, is_name
from explain.core.errors import UsageError
from explain.core.shape_rules import Shape, fmt_shape

ARROW = "->"


# Plain classes, not dataclasses: building a dataclass costs startup time this command does not have.
class Term:
    """One operand of the einsum as written: its optional label and its names with their columns."""

    __slots__ = ("label", "names", "start", "end")

    def __init__(self, label: str | None, names: list[tuple[str, int]], start: int, end: int) -> None:
        self.label = label
        self.names = names
        self.start, self.end = start, end  # columns of the names' span, for a caret under the whole term


class EinsumResult:
    """The checked einsum: output shape, each name's size, where the size came from, and its role."""

    __slots__ = ("spec", "inputs", "output", "shape", "bindings", "sources", "contracted")

    def __init__(self, spec: str, inputs: list[Term], output: list[tuple[str, int]], shape: Shape,
                 bindings: dict[str, int], sources: dict[str, str], contracted: list[str]) -> None:
        self.spec, self.inputs, self.output, self.shape = spec, inputs, output, shape
        self.bindings = bindings  # name -> size, in order of first appearance
        self.sources = sources  # name -> where its size came from ("--dim seq=5", "x axis 1")
        self.contracted = contracted  # names summed over (not in the output)


def is_einsum(text: str) -> bool:
    """Whether ``text`` is in the einsum form: ``->`` occurs in a numpy expression only inside a string (an
    einops pattern, ``np.einsum("ij,jk->ik", a, b)``)."""
    return ARROW in text and '"' not in text and "'" not in text


def _tokens(spec: str, start: int, end: int) -> list[tuple[str, int]]:
    """The names in ``spec[start:end]`` with their columns; bad names are a UsageError."""
    out = []
    for m in re.finditer(r"\S+", spec[start:end]):
        tok, col = m.group(), start + m.start()
        if "." in tok:
            raise UsageError(f"not supported: {tok!r} in an einsum (ellipsis); name every dimension, "
                             "like 'batch seq d, d h -> batch seq h'")
        if not is_name(tok):
            raise UsageError(f"einsum dimension name {tok!r} at column {col + 1} is not a name: use letters, "
                             "digits and _, not starting with a digit")
        out.append((tok, col))
    return out


def parse_spec(spec: str) -> tuple[list[Term], list[tuple[str, int]]]:
    """Split an einsum spec into its input terms and output names, keeping columns."""
    if spec.count(ARROW) != 1:
        raise UsageError(f"an einsum needs exactly one '->' between inputs and output, found {spec.count(ARROW)}")
    arrow = spec.index(ARROW)
    terms: list[Term] = []
    pos = 0
    for piece in spec[:arrow].split(","):
        start, end = pos, pos + len(piece)
        pos = end + 1
        label = None
        if ":" in piece:
            head, _, _ = piece.partition(":")
            label = head.strip()
            if not is_name(label) or ":" in piece[len(head) + 1:]:
                raise UsageError(f"einsum operand {piece.strip()!r}: write a label as 'NAME: dims', like 'x: b s d'")
            start += len(head) + 1
        names = _tokens(spec, start, end)
        if not names:
            raise UsageError(f"einsum operand {len(terms) + 1} has no dimension names: write names separated by "
                             "spaces, operands separated by commas")
        terms.append(Term(label, names, names[0][1], names[-1][1] + len(names[-1][0])))
    return terms, _tokens(spec, arrow + len(ARROW), len(spec))


def _numpy_style_hint(terms: list[Term], output: list[tuple[str, int]]) -> str:
    """A hint for numpy's letter spelling ('ij,jk->ik'), which reads here as one name per operand."""
    toks = [n for t in terms for n, _ in t.names] + [n for n, _ in output]
    if all(len(t.names) == 1 for t in terms) and len(output) <= 1 and any(len(n) > 1 for n in toks) \
            and all(n.isalpha() for n in toks):
        spaced = ", ".join(" ".join(t.names[0][0]) for t in terms) + " -> " + " ".join("".join(n for n, _ in output))
        return f"; names are separated by spaces here, so numpy's letters are written {spaced!r}"
    return ""


def _fail(spec: str, message: str, start: int, end: int) -> CheckShapeError:
    return CheckShapeError(message, caret_lines(spec, start, end))


def check_einsum(text: str, bindings: Bindings) -> EinsumResult:
    """Bind every name of the einsum ``text`` to a size and return the output shape, or raise."""
    spec = check_length(text, "einsum")
    terms, output = parse_spec(spec)
    hint = _numpy_style_hint(terms, output)
    in_names = [n for t in terms for n, _ in t.names]
    out_names = [n for n, _ in output]
    _check_structure(spec, terms, output, bindings, hint)
    sizes: dict[str, tuple[int, str]] = {n: (bindings.dims[n], f"--dim {n}={bindings.dims[n]}")
                                         for n in dict.fromkeys(in_names) if n in bindings.dims}
    for i, term in enumerate(terms, start=1):
        _bind_term(spec, i, term, bindings, sizes, out_names)
    missing = [n for n in dict.fromkeys(in_names) if n not in sizes]
    if missing:
        fix = " ".join(f"--dim {m}=N" for m in missing)
        raise UsageError(f"einsum dimension{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                         f"{'have' if len(missing) > 1 else 'has'} no size: add {fix}, or label the operand "
                         f"and give its --shape{hint}")
    order = list(dict.fromkeys(in_names))
    return EinsumResult(
        spec=spec, inputs=terms, output=output,
        shape=tuple(sizes[n][0] for n in out_names),
        bindings={n: sizes[n][0] for n in order},
        sources={n: sizes[n][1] for n in order},
        contracted=[n for n in order if n not in out_names],
    )


def _check_structure(spec: str, terms: list[Term], output: list[tuple[str, int]], bindings: Bindings,
                     hint: str) -> None:
    """What is wrong whatever the sizes are: an output name from no input or twice, a --shape for no label."""
    in_names = [n for t in terms for n, _ in t.names]
    seen: set[str] = set()
    for name, col in output:
        if name not in in_names:
            have = ", ".join(dict.fromkeys(in_names))
            raise _fail(spec, f"output dimension '{name}' appears in no input (inputs have {have}); every output "
                        f"name must come from an input{hint}", col, col + len(name))
        if name in seen:
            raise _fail(spec, f"output dimension '{name}' appears twice in the output; each output name may "
                        "appear once", col, col + len(name))
        seen.add(name)
    labels = {t.label for t in terms if t.label}
    for name in bindings.arrays:
        if name not in labels:
            raise UsageError(f"--shape {name} is given but no einsum operand is labelled {name}: label it like "
                             f"'{name}: b s d, d h -> b s h'")


def _bind_term(spec: str, i: int, term: Term, bindings: Bindings, sizes: dict[str, tuple[int, str]],
               out_names: list[str]) -> None:
    """Operand ``i``'s sizes into ``sizes`` (name -> size and where it came from), from its label's --shape."""
    if term.label is None:
        return  # its sizes can only come from --dim
    if term.label not in bindings.arrays:
        raise UsageError(f"einsum operand '{term.label}' has no shape: add --shape {term.label}=DIMS, or "
                         "drop the label and give each dimension with --dim")
    shape = bindings.arrays[term.label]
    if len(shape) != len(term.names):
        raise _fail(spec, f"operand {i} ({term.label}) names {len(term.names)} dimensions but its shape "
                    f"{fmt_shape(shape)} has {len(shape)}", term.start, term.end)
    here: set[str] = set()
    for axis, (name, col) in enumerate(term.names):
        size, src = shape[axis], f"{term.label} axis {axis}"
        if name in sizes and sizes[name][0] != size:
            old, old_src = sizes[name]
            # numpy broadcasts a size-1 axis against the other operands' size for the same name (not within
            # one operand, where a repeated name takes a diagonal, and not against a declared --dim)
            if 1 in (old, size) and name not in here and not old_src.startswith("--dim"):
                if old == 1:
                    sizes[name] = (size, src)
                here.add(name)
                continue
            raise _fail(spec, _conflict(name, i, term, old, old_src, size, src, name in here, out_names),
                        col, col + len(name))
        sizes.setdefault(name, (size, src))
        here.add(name)


def _conflict(name: str, i: int, term: Term, old: int, old_src: str, size: int, src: str, repeated: bool,
              out_names: list[str]) -> str:
    """Why ``name`` cannot be both ``old`` and ``size``: a diagonal, an output axis, or a contracted one."""
    if repeated:
        return (f"dimension '{name}' appears twice in operand {i} ({term.label}) with sizes {old} and "
                f"{size}; a repeated name takes the diagonal, so both must be equal")
    if name in out_names:
        return f"dimension '{name}' is bound to two sizes: {old} ({old_src}) and {size} ({src})"
    return (f"contracted dimension '{name}' differs: {old} ({old_src}) and {size} ({src}); it is "
            "summed over pairwise, so both sizes must be equal (or one of them 1, which "
            "numpy broadcasts)")
