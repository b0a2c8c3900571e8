"""Every step name that code builds or parses, in one place: nobody else splits a name to find out what it is.

A step name is a dotted path mirroring TransformerLens hook names (``blocks.0.attn.q``). On top of the model's
own names a run adds:

- a generation's new tokens: new token ``n`` is the scope ``gen.n.`` (:func:`gen_scope`), its steps named as
  the prompt's forward names them (``gen.3.blocks.0.attn.q``) and reading the same parameters
  (:func:`param_name`);
- the backward pass: ``x.grad`` is ∂L/∂x; where x feeds several steps, the part arriving from step s is
  ``x.grad.from.s`` (``.argI`` when s reads x twice) and the parts add into ``x.grad`` (:func:`grad`,
  :func:`grad_from`, :func:`gradient_of`); an SGD step's new parameter is ``W.updated`` (:func:`updated`);
- the step tree's groups (:func:`group_of`): ``blocks.N`` and ``gen.N`` are one level each, and the backward
  pass and the update sit under their own top groups :data:`BACKWARD` and :data:`UPDATE`;
- the prefixes of the interpretability steps (the logit lens, attribution, patching): :data:`LENS`,
  :data:`ATTRIB`, :data:`PATCH`, a scope each (``lens.blocks.0.resid_post``), built with :func:`scoped`;
- a name taken apart once (:func:`step_name`: new token, stack, block, sublayer, leaf), which the notation
  table's rows (:class:`On`) match: nobody matches a name against a glob or a regex.

This module imports nothing of explain, so every layer may read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

GRAD = ".grad"  # x.grad: the gradient of the loss with respect to x
_FROM = GRAD + ".from."  # x.grad.from.s: the part of x.grad that arrives through step s
_ARG = ".arg"  # x.grad.from.s.arg1: s reads x twice (x @ x.T); the part through its input 1
UPDATED = ".updated"  # W.updated: W after one step of gradient descent
GEN = "gen"  # the scope of a generation's new tokens: gen.0., gen.1., ...
BACKWARD = "backward"  # the step tree's top group of the backward pass
UPDATE = "update"  # the step tree's top group of an SGD step and the loss after it
LENS = "lens"  # the logit lens: each layer's residual stream read through the unembedding
ATTRIB = "attrib"  # attribution: what each component adds to a logit
PATCH = "patch"  # activation patching: a run with one activation taken from another run
PREFIXES = (GEN, LENS, ATTRIB, PATCH)  # scopes a run adds in front of a model's own step names
_LEVELS = ("blocks", GEN)  # a name part that takes the next part with it as one level of the step tree


# -- scopes --------------------------------------------------------------------------------------------------
def scoped(prefix: str, name: str) -> str:
    """``name`` inside the scope ``prefix`` (``lens``, ``blocks.0.resid_post`` → ``lens.blocks.0.resid_post``)."""
    return f"{prefix}.{name}" if name else prefix


# -- the tokenizer's steps ---------------------------------------------------------------------------------
TOKENIZER = "tokenizer"  # the group of a run's tokenizer steps (--tokenizer-steps), before its model's


def tokenizer_step(*parts: str) -> str:
    """A step of the tokenizer's group: ``tokenizer.piece3.merge2``."""
    return ".".join((TOKENIZER, *parts))


_TEXT_AXES = ("bytes:", "chars:")  # an axis of a text's bytes or characters: values that are no token ids


def text_axis(kind: str, name: str) -> str:
    """The axis of a text's UTF-8 bytes (``kind`` "bytes") or code points ("chars"): ``bytes:text``."""
    assert kind + ":" in _TEXT_AXES, kind
    return f"{kind}:{name}"


def is_text_axis(axis: str) -> bool:
    """Whether an axis holds a text's bytes or code points (drawn as numbers, never as token words)."""
    return axis.startswith(_TEXT_AXES)


# -- the tiled attention kernel ------------------------------------------------------------------------------
def tile_scope(t: int) -> str:
    """The scope of tile ``t`` of the tiled attention kernel: ``tile0`` (``blocks.0.attn.tile0.max``)."""
    return f"tile{t}"


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def tile_sup(t: int) -> str:
    """Tile ``t`` as its symbols carry it: ``⁽¹²⁾`` (m⁽¹²⁾ is the running max after tile 12); a tokenizer piece's
    symbol after its merge or match ``t`` too (p3⁽²⁾)."""
    return f"⁽{str(t).translate(_SUPERSCRIPT)}⁾"


def lens_read(name: str) -> str | None:
    """The logits step of the logit lens's read that a step belongs to (``lens.blocks.0.resid_mid.probs`` →
    ``lens.blocks.0.resid_mid.logits``), or None for a step outside the lens."""
    if not name.startswith(LENS + ".") or name.count(".") < 2:
        return None
    return name.rsplit(".", 1)[0] + ".logits"


# -- blocks --------------------------------------------------------------------------------------------------
BLOCKS = "blocks"  # a stack's blocks: blocks.0., blocks.1., ... (decoder.blocks.0. in an encoder-decoder)


def block_of(name: str) -> tuple[str, int, str] | None:
    """The first block a name lies in, as (what comes before it, its number, what comes after it):
    ``gen.2.decoder.blocks.3.attn.q`` → ``("gen.2.decoder.", 3, "attn.q")``, ``blocks.3`` → ``("", 3, "")``;
    None for a name outside every block."""
    parts = name.split(".")
    for i in range(len(parts) - 1):
        if parts[i] == BLOCKS and parts[i + 1].isdecimal():
            return ".".join(parts[:i]) + ("." if i else ""), int(parts[i + 1]), ".".join(parts[i + 2:])
    return None


# -- generation ----------------------------------------------------------------------------------------------
def gen_scope(n: int) -> str:
    """The scope of new token ``n`` of a generation: ``gen.3``."""
    return f"{GEN}.{n}"


def gen_step(n: int, name: str) -> str:
    """Step ``name`` of new token ``n``: ``gen.3.next``."""
    return scoped(gen_scope(n), name)


def gen_number(name: str) -> int | None:
    """The new token a step belongs to (``gen.3.blocks.0.ln1`` → 3), or None for a step of the prompt's run."""
    head, _, rest = name.partition(".")
    number, dot, _ = rest.partition(".")
    return int(number) if head == GEN and dot and number.isdigit() else None


def is_draw(name: str) -> bool:
    """A step that draws a generation's new token: ``gen.3.next`` (the token) or ``gen.3.u`` (the uniform number
    it was drawn with); the prediction panel shows the vocabulary's distribution beside them."""
    return gen_number(name) is not None and name.split(".", 2)[2] in ("next", "u")


def is_generated(name: str) -> bool:
    """A step (or a notation glob, ``gen.*.probs``) of a generation's new tokens."""
    head, _, rest = name.partition(".")
    return head == GEN and bool(rest)


def param_name(name: str) -> str:
    """The parameter a name refers to: the steps of new token n are named ``gen.n.`` + the name the step has in
    the prompt's forward, and use that forward's parameters (``gen.3.blocks.0.attn.W_Q`` is
    ``blocks.0.attn.W_Q``)."""
    return name.split(".", 2)[2] if gen_number(name) is not None else name


def as_first_token(name: str) -> str:
    """The name as new token 0 has it (``gen.3.attn.scores`` → ``gen.0.attn.scores``): every new token's steps
    read the same notation."""
    return gen_step(0, param_name(name)) if gen_number(name) is not None else name


# -- the backward pass and the update -------------------------------------------------------------------------
def grad(name: str) -> str:
    """∂L/∂name, complete: ``blocks.0.ln1.grad``."""
    return name + GRAD


def grad_from(name: str, consumer: str, arg: int | None = None) -> str:
    """The part of ∂L/∂name that arrives through the step ``consumer`` (its input ``arg`` when it reads name
    twice)."""
    return f"{name}{_FROM}{consumer}" + (f"{_ARG}{arg}" if arg is not None else "")


def gradient_of(name: str) -> str | None:
    """The value a gradient step is of (``x`` for ``x.grad`` and ``x.grad.from.s``), or None for another step."""
    if _FROM in name:
        return name.split(_FROM, 1)[0]
    return name[: -len(GRAD)] if name.endswith(GRAD) else None


def arriving(name: str) -> tuple[str, str] | None:
    """(value, consumer) of a partial gradient ``value.grad.from.consumer``; None for any other step."""
    if _FROM not in name:
        return None
    value, consumer = name.split(_FROM, 1)
    return value, consumer


def updated(name: str) -> str:
    """The parameter ``name`` after one SGD step: ``W_E.updated``."""
    return name + UPDATED


def updated_of(name: str) -> str | None:
    """The parameter an update step is of (``W_E`` for ``W_E.updated``), or None."""
    return name[: -len(UPDATED)] if name.endswith(UPDATED) else None


# -- the step tree ---------------------------------------------------------------------------------------------
def group_of(name: str) -> tuple[str, ...]:
    """The tree path of a step name: ``decoder.blocks.0.attn.q`` → ("decoder", "blocks.0", "attn");
    ``gen.3.blocks.0.attn.q`` (new token 3 of a generation) → ("gen.3", "blocks.0", "attn")."""
    parts = name.split(".")[:-1]
    out: list[str] = []
    i = 0
    while i < len(parts):
        if parts[i] in _LEVELS and i + 1 < len(parts):
            out.append(f"{parts[i]}.{parts[i + 1]}")
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return tuple(out)


def backward_group(of: str) -> tuple[str, ...]:
    """Where a backward step is filed: under :data:`BACKWARD`, in the group of the step ``of`` it goes back
    through (``backward › blocks.0 › attn``), so the backward tree reads block by block."""
    return (BACKWARD, *group_of(of))


def update_group(of: str = "") -> tuple[str, ...]:
    """Where an update step is filed: under :data:`UPDATE`, in the group of its parameter."""
    return (UPDATE, *group_of(of)) if of else (UPDATE,)


def in_backward(group: tuple[str, ...]) -> bool:
    """A step filed under the backward pass."""
    return group[:1] == (BACKWARD,)


def in_training(group: tuple[str, ...]) -> bool:
    """A step filed under the backward pass or the update after it (not the model's forward)."""
    return group[:1] in ((BACKWARD,), (UPDATE,))


def label(name: str, group: tuple[str, ...]) -> str:
    """The name within its group, as the step tree shows it: ``q`` under blocks.0 › attn, ``pattern.grad``
    under backward › blocks.0 › attn, ``ln1.grad ← attn.q`` for one of several gradients arriving."""
    parts = [p for g in group if g not in (BACKWARD, UPDATE) for p in g.split(".")]
    prefix = ".".join(parts) + "." if parts else ""

    def rel(n: str) -> str:
        return n[len(prefix):] if prefix and n.startswith(prefix) else n

    part = arriving(name)
    if part is not None:
        return f"{rel(part[0])}.grad ← {rel(part[1])}"
    return rel(name)


# -- a name taken apart, as the notation table matches it ---------------------------------------------------
STACKS = ("encoder", "decoder")  # an encoder-decoder's two stacks: encoder.blocks.0.attn.q, decoder.embed
PAIRS = "pairs"  # BERT's pair view: one scope per word pair, pairs.A_B
_ATTENTIONS = ("self_attn", "cross_attn")  # a decoder block's two attentions, each an attention (attn) to notation


def name_matches(pattern: str, *names: str) -> bool:
    """Whether ``--match`` picks one of ``names``: a glob (``blocks.*.attn.q``), a name, a prefix (``blocks.0``)."""
    return any(fnmatchcase(n, pattern) or n == pattern or n.startswith(pattern + ".") for n in names)


def pair_scope(a: int, b: int) -> str:
    """The scope of the pair of word ``a`` of one text and word ``b`` of the other: ``pairs.0_3``."""
    return f"{PAIRS}.{a}_{b}"


@dataclass(frozen=True)
class StepName:
    """A step name taken apart (:func:`step_name`): ``gen.2.decoder.blocks.3.cross_attn.q`` is new token 2,
    stack ``decoder``, block 3, sublayer ``cross_attn``, leaf ``q``, path ``attn.q``."""

    new_token: int | None  # the new token of a generation the step belongs to (gen.N.), or None
    stack: str  # the scopes in front of its block or path (an encoder-decoder's stack, lens, patch), or ""
    block: int | None  # the block it lies in (blocks.N.), or None
    sublayer: str  # the scopes between the block (or stack) and the leaf: attn, mlp.experts, pairs.0_3, or ""
    leaf: str  # its last part: q, ln1, logits
    path: str  # sublayer and leaf as the notation names them: a decoder's self_attn and cross_attn are attention
    # (attn.q, attn_out) and a word pair's numbers are dropped (pairs.parts)


def step_name(name: str) -> StepName:
    """``name`` taken apart into its new token, stack, block, sublayer, leaf and path."""
    rest = param_name(name)
    found = block_of(rest)
    if found is not None:
        before, block, path = found
        stack = before[:-1]
    else:
        parts = rest.split(".")
        i = 0
        while i < len(parts) - 1 and parts[i] in (*STACKS, LENS, ATTRIB, PATCH):
            i += 1
        stack, block, path = ".".join(parts[:i]), None, ".".join(parts[i:])
    sublayer, _, leaf = path.rpartition(".")
    scopes = ["attn" if p in _ATTENTIONS else p for p in sublayer.split(".") if p]
    if scopes[:1] == [PAIRS] and len(scopes) > 1:
        del scopes[1]
    read = next(("attn_out" for a in _ATTENTIONS if leaf == f"{a}_out"), leaf)
    return StepName(gen_number(name), stack, block, sublayer, leaf or rest.rpartition(".")[2], ".".join([*scopes, read]))


@dataclass(frozen=True)
class On:
    """Which steps a notation row is for, matched on the parts of their names (:class:`StepName`); a row given as
    a plain string is for the step of exactly that name.

    ``path``: the step's :attr:`StepName.path` (or any of several); ``block``: a number is that block, True any
    block, False none, None either; ``stack``: "" the model's own names, "decoder" that stack, None any;
    ``new_token``: a row for a generation's new tokens (their steps read the prompt's rows unless one is)."""

    path: str | tuple[str, ...]
    block: int | bool | None = None
    stack: str | None = None
    new_token: bool = False

    def matches(self, step: StepName) -> bool:
        if step.path != self.path and (isinstance(self.path, str) or step.path not in self.path):
            return False  # the path first: it tells most rows apart
        if self.new_token != (step.new_token is not None) or self.stack not in (None, step.stack):
            return False
        if isinstance(self.block, bool):
            return self.block == (step.block is not None)
        return self.block is None or step.block == self.block
