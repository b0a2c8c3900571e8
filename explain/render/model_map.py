"""The model map, as text: the architecture of a run drawn from its steps' names and groups (no model code is
read): embed → each block's parts (attention, MLP, the residual adds ``+``, the norms) → the final norm →
logits and loss; the encoder and the decoder of the ``transformer`` side by side, their shared head below.

A :class:`Node` is a box of one or more steps (a block's attention is one box: q, k, v, scores, …, its output
projection); two nodes of a row are joined by ``→`` where the second reads the first (``·`` where neither reads the other:
``embed · pos_embed``), and rows by an edge that carries the shape of the tensor that
flows along it, ``│ (1, 4, 8)``. Above a block's row runs its residual stream: from what each ``+`` adds back
(an earlier ``+``, a post-norm block's norm, or the row above) over the branch, down into the ``+``. Generation and gradient steps are mapped to the forward step they come from, so
the map lights the part of the model a step belongs to wherever the step screen is."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from explain.core.names import block_of, gradient_of, is_generated, param_name
from explain.core.shape_rules import fmt_shape
from explain.trace import Trace

_SHORT = {"self_attn": "self", "cross_attn": "cross"}  # the decoder's row must fit half of 80 columns
SIDES = ("encoder.", "decoder.")


def _in_block(name: str) -> tuple[int, str] | None:
    """(block, the name inside it) of a model's own ``[SIDE]blocks.N.REST``; None outside a block (or in a scope)."""
    where = block_of(name)
    return (where[1], where[2]) if where and where[2] and where[0] in ("", *SIDES) else None


@dataclass
class Node:
    """A box of the map: its label, the steps it stands for (indices into the trace, in order) and the shape of
    its output (its last step's)."""

    label: str
    steps: list[int] = field(default_factory=list)
    key: str = ""  # the forward name prefix its steps share (``blocks.0.attn``, ``embed``): see :func:`node_key`
    shape: tuple[int, ...] = ()
    fed: bool = True  # it reads a step of the node before it in its row (an arrow); else the two sit side by side
    skip: int | None = None  # a residual add: the row's node whose output skips the branch to it (-1: a row above)


@dataclass
class Row:
    """One line of the map: a label (``L3`` for a block, empty outside the blocks) and its nodes."""

    label: str
    nodes: list[Node]
    edge: str = ""  # the shapes flowing down out of the row (``(1, 4, 8) + (4, 8)``); empty: the row's output

    @property
    def shape(self) -> tuple[int, ...]:
        return self.nodes[-1].shape


def forward_name(name: str) -> str:
    """The forward step a step comes from: ``blocks.0.attn.q.grad`` → ``blocks.0.attn.q`` (a gradient),
    ``gen.2.blocks.0.attn.q`` → ``blocks.0.attn.q`` (a generated token's pass)."""
    name = param_name(name)  # a generated token's step is named gen.n. + the prompt's step name
    return gradient_of(name) or name


def node_key(name: str, op: str) -> tuple[str, str]:
    """(key, label) of the node a forward step belongs to: a block's sub-group (``attn``, ``mlp``), its output
    projection with it (``attn_out`` → ``attn``), an add as ``+``, anything else by its own name."""
    m = _in_block(name)
    if not m:
        return name, name.rpartition(".")[2] if name.startswith(SIDES) else name
    rest = m[1]
    block = name[: len(name) - len(rest)]
    part = rest.split(".")[0]
    if "." in rest:  # inside a sub-group: attn.q → attn
        return block + part, _SHORT.get(part, part)
    if part.endswith("_out") and part[:-4]:
        return block + part[:-4], _SHORT.get(part[:-4], part[:-4])
    return block + part, "+" if op == "add" else part


def build(trace: Trace) -> tuple[list[list[Row]], list[Row]]:
    """The map of ``trace``: a column of rows per side (one for a decoder-only model; the encoder's and the
    decoder's for the transformer), and the rows after every block (the head: final norm, logits, loss)."""
    columns: dict[str, list[Row]] = {}
    tail: list[Row] = []
    nodes: dict[str, Node] = {}
    seen_block = False
    for step in trace:
        if step.name != forward_name(step.name) or is_generated(step.name):
            continue  # a gradient's or a generated token's step: lit through the forward step it comes from
        key, label = node_key(step.name, step.op)
        if key in nodes:
            nodes[key].steps.append(step.index)
            nodes[key].shape = tuple(step.shape)
            continue
        node = nodes[key] = Node(label, [step.index], key, tuple(step.shape))
        side = next((s for s in SIDES if step.name.startswith(s)), "")
        m = _in_block(step.name)
        seen_block = seen_block or m is not None
        rows = columns.setdefault(side, []) if side or m or not seen_block else tail
        row_label = f"{side[:1].upper() if side else 'L'}{m[0]}" if m else ""
        if not rows or rows[-1].label != row_label:
            rows.append(Row(row_label, []))
        rows[-1].nodes.append(node)
    for rows in [*columns.values(), tail]:
        for row, below in zip(rows, rows[1:] + tail[:1]):
            row.edge = _edge(trace, row, below)
        for row in rows:  # an arrow only where the data flows: embed does not feed pos_embed, nor v the scores
            for before, node in zip(row.nodes, row.nodes[1:]):
                theirs = {trace[i].name for i in before.steps}
                node.fed = any(name in theirs for i in node.steps for name in trace[i].inputs)
        for row in rows:
            _skips(trace, row)
    if "encoder." in columns and "decoder." in columns:  # the encoder's output goes to every cross-attention
        last = columns["encoder."][-1]
        last.edge = f"{fmt_shape(last.shape)} → each decoder cross"
    return list(columns.values()), tail


def _skips(trace: Trace, row: Row) -> None:
    """Mark each ``+`` of ``row`` that adds a branch's output (the node before it) to the residual stream with
    where that stream comes from: the row's node that wrote it (gpt's ``resid_mid`` reads block 0's first ``+``,
    BERT's second ``+`` its ``ln1``), or -1 for a step of a row above (llama's first ``+`` reads the embedding)."""
    for j, node in enumerate(row.nodes):
        if node.label != "+" or not j or len(node.steps) != 1:
            continue  # gpt's first + adds embed to pos_embed, both from the row above: no branch to skip
        branch = {trace[i].name for i in row.nodes[j - 1].steps}
        stream = [name for name in trace[node.steps[0]].inputs if name not in branch]
        if not stream or len(stream) == len(trace[node.steps[0]].inputs):
            continue  # not a branch's output added to something else
        owners = [k for k, n in enumerate(row.nodes[:j]) if stream[0] in {trace[i].name for i in n.steps}]
        node.skip = owners[-1] if owners else -1


def _edge(trace: Trace, row: Row, below: Row) -> str:
    """The shapes of what ``row`` hands to the row ``below``: the inputs of the first step below that are
    steps of ``row`` (gpt's first add reads embed (1, 4, 8) and pos_embed (4, 8)); else ``row``'s output."""
    mine = {trace[i].name for n in row.nodes for i in n.steps}
    first = trace[below.nodes[0].steps[0]]
    shapes = [fmt_shape(trace.shape_of(name)) for name in first.inputs if name in mine]
    return " + ".join(shapes) if shapes else fmt_shape(row.shape)


def lines_of(rows: list[Row], width: int, lit: set[int], chosen: Node | None,
             places: dict[int, tuple[int, int]], col: int, top: int, last_edge: bool = True,
             streams: set[str] | None = None) -> list[Text]:
    """The rows drawn in ``width`` columns (a row too long wraps under itself). Between two nodes of a row the
    arrow carries the shape leaving the first when it changes (``─(1, 4, 8)→``); below a row that is not
    followed by another block, an edge with the shape leaving it (``│ (1, 4, 8)``). Above a block's row, its
    residual stream: a line from what each ``+`` adds back over the branch into the ``+`` (``╭─residual─╮``);
    ``streams`` names the rows that get it (None: every row). ``places`` gets each node's (line, column) on
    screen, for the cursor."""
    out: list[Text] = []
    for i, row in enumerate(rows):
        head = f"{row.label:<4}" if row.label else ""
        line = Text(head, style="bold", no_wrap=True, overflow="crop")
        drawn: list[Text] = []
        where: list[tuple[int, int]] = []  # each node's (line of the row, column of its label's first character)
        shown: tuple[int, ...] | None = None
        for j, node in enumerate(row.nodes):
            piece = f" {node.label} "
            sep = ""
            if j and not node.fed:  # side by side: neither reads the other
                sep, shown = "·", None
            elif j:
                before = row.nodes[j - 1].shape
                sep = "→" if before == shown or before == node.shape else f"─{fmt_shape(before)}→"
                shown = before
            if len(line) + len(sep) + len(piece) > width and len(line) > len(head):
                drawn.append(line)
                line = Text(" " * max(len(head), 1), no_wrap=True, overflow="crop")
                sep = sep[1:] if sep.startswith("─") else sep
            line.append(sep, "dim green" if len(sep) > 1 else "dim")
            here = any(s in lit for s in node.steps)
            style = " ".join(x for x in ("bold reverse" if node is chosen else "", "yellow" if here else "") if x)
            where.append((len(drawn), len(line) + 1))
            line.append(piece, style or ("" if row.label else "cyan"))
        drawn.append(line)
        arcs = _stream(row, where, [ln.cell_len for ln in drawn]) if streams is None or row.label in streams else []
        for k, ln in enumerate(drawn):
            if k < len(arcs) and arcs[k].strip():
                out.append(Text(arcs[k].rstrip(), style="green", no_wrap=True, overflow="crop"))
            for node, (at, c) in zip(row.nodes, where):
                if at == k:
                    places[id(node)] = (top + len(out), col + c - 1)
            out.append(ln)
        following = rows[i + 1] if i + 1 < len(rows) else None
        if (following is not None and not (row.label and following.label)) or (following is None and last_edge):
            out.append(Text(f" │ {row.edge or fmt_shape(row.shape)}", style="dim green"))  # the edge down
    return out


def _stream(row: Row, where: list[tuple[int, int]], lengths: list[int]) -> list[str]:
    """The line drawn above each line of ``row``: for each residual add, an arc from the node its stream comes
    from (column 0 when from a row above) over the branch down into the ``+``; arcs that meet at a ``+`` join
    (``┬``: the sum goes on along the stream). The row's first arc is labelled ``residual`` where it has room."""
    cells = [[" "] * n for n in lengths]
    named = False
    for j, node in enumerate(row.nodes):
        if node.skip is None:
            continue
        (sk, sc), (dk, dc) = ((0, 0) if node.skip < 0 else where[node.skip]), where[j]
        for k in range(sk, dk + 1):
            first, last = (sc if k == sk else 0), (dc if k == dk else lengths[k] - 1)
            for c in range(first + 1, last):
                cells[k][c] = "─" if cells[k][c] == " " else cells[k][c]
            if k == sk:
                cells[k][first] = "┬" if cells[k][first] in "╮┬" else "╭"
            if k == dk:
                cells[k][last] = "╮"
            label = "residual"
            if not named and last - first - 2 >= len(label):
                cells[k][first + 2:first + 2 + len(label)] = label
                named = True
    return ["".join(c) for c in cells]
