"""The heads screen (``m``): every attention pattern of the pass at once, as a layer × head grid of small
heatmaps (BertViz's model view), drawn by :mod:`explain.render.head_grid`: a row per pattern step (``L3``; for
the transformer ``E0`` encoder, ``D0`` decoder self-attention, ``D0x`` its cross-attention), a column per head;
for grouped-query attention (llama) a second ruler says which key/value head each query head shares.

GPT-2 small's 12 × 12 fit at 200×50; a smaller terminal pages the layers (and, with many heads, the heads). A
pattern longer than its tile is max-pooled, said on screen. The colours are the step screen's scale (``V``
there), and its cell cursor is the ``+`` in every tile (``H J K L`` move it). Arrows choose a tile, Enter opens
it in the step view, ``z`` shows its layer's heads with their values (:mod:`.layer_heads`). Pooling a long
pattern reads all of it (20 ms a layer of GPT-2 small's 12 heads at 1,024 tokens): a page bigger than
:data:`SYNC_VALUES` is pooled in a thread started after the first frame, its tiles dotted until done, so the
screen opens at once; pooled layers are kept with the trace, so the grid opens pooled the next time."""

from __future__ import annotations

import weakref
from dataclasses import replace

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from explain.core.names import block_of
from explain.ops.base import num
from explain.render.head_grid import LABEL_W, Geometry, Pooled, draw_grid, geometry, pool
from explain.render.step import axis_labels
from explain.trace import Step, Trace
from explain.tui import picture
from explain.tui.screens.layer_heads import (  # noqa: F401 - re-exported: the step screen imports them from here
    LayerHeadsScreen,
    head_axis,
    is_pattern,
    pattern_step,
    tiles_per_row,
)
from explain.tui.state import View

SYNC_VALUES = 4_000_000  # a page of patterns up to this many weights is pooled before the first frame
Key = tuple[int, tuple[int, ...], tuple[int, int]]  # a pooled layer: (its step, the batch item's slice, drawn size)
# pooled layers per trace, kept as long as the trace is: opening the grid again (or paging back) pools nothing
_POOLED: weakref.WeakKeyDictionary[Trace, dict[Key, list[Pooled]]] = weakref.WeakKeyDictionary()
_SIDES = ("encoder.", "decoder.")  # the transformer's two stacks: one pass


def _pattern(name: str) -> tuple[str, str, int, str] | None:
    """(the pass, its stack, the block, the attention group) of ``PRE[SIDE]blocks.N.ATTN.pattern``, else None."""
    where = block_of(name)
    if where is None:
        return None
    before, n, rest = where
    attn, dot, last = rest.partition(".")
    if not (attn and dot and last == "pattern"):
        return None
    side = next((s for s in _SIDES if before.endswith(s)), "")
    return before[: len(before) - len(side)], side, n, attn


def row_label(step: Step) -> str:
    """``L3`` (block 3), ``E0``/``D0`` (the transformer's encoder/decoder), ``D0x`` (its cross-attention)."""
    m = _pattern(step.name)
    if m is None:
        return step.label[:LABEL_W - 1]
    _, side, n, attn = m
    return f"{ {'encoder.': 'E', 'decoder.': 'D'}.get(side, 'L')}{n}{'x' if 'cross' in attn else ''}"


def pass_of(step: Step) -> str:
    """The forward pass a pattern belongs to: what its name has before the blocks (``gen.2.`` for a generated
    token's; the encoder and the decoder are one pass)."""
    m = _pattern(step.name)
    return m[0] if m else step.name


class HeadsScreen(ModalScreen[View | None]):
    """Every pattern of the pass of ``view``'s step × every head; dismisses with the view to show, or None."""

    DEFAULT_CSS = """
    HeadsScreen { align: center middle; }
    HeadsScreen #dialog { width: 100%; height: 100%; border: round $accent; background: $surface; padding: 0 1; }
    HeadsScreen #grid { height: 1fr; }
    """
    BINDINGS = [Binding("escape,q,m", "dismiss(None)", "close"), Binding("enter", "open", "open head"),
                Binding("z", "zoom", "layer's heads"),
                Binding("left,h", "choose(0, -1)", show=False), Binding("right,l", "choose(0, 1)", show=False),
                Binding("up,k", "choose(-1, 0)", show=False), Binding("down,j", "choose(1, 0)", show=False),
                Binding("H", "cell(0, -1)", show=False), Binding("L", "cell(0, 1)", show=False),
                Binding("K", "cell(-1, 0)", show=False), Binding("J", "cell(1, 0)", show=False),
                Binding("n,pagedown", "page(1)", "next page"), Binding("p,pageup", "page(-1)", "previous page"),
                picture.BINDING]

    def __init__(self, view: View) -> None:
        super().__init__()
        self.view = view
        here = view.step
        self.patterns = [s for s in view.trace if is_pattern(s) and pass_of(s) == pass_of(here)]
        self.row = self.patterns.index(here) if here in self.patterns else 0
        axis = head_axis(here)
        self.head = view.lead[axis] if axis is not None and axis < len(view.lead) else 0
        self.cell = view.cell
        self.n_heads = max((s.shape[head_axis(s)] if head_axis(s) is not None else 1) for s in self.patterns)
        self.n = max(max(s.shape[-2:]) for s in self.patterns)
        self.geo: Geometry | None = None
        self.pooled = _POOLED.setdefault(view.trace, {})  # kept with the trace: the grid opens again at once
        self._pending: set[Key] = set()

    # -- what is shown -------------------------------------------------------------------------------------
    def _lead(self, step: Step, head: int) -> tuple[int, ...]:
        """The slice of ``step`` for ``head``: the step view's batch item, that head."""
        axes, lead = step.axes[:-2], []
        for i, a in enumerate(axes):
            if a == "head":
                lead.append(min(head, step.shape[i] - 1))
            else:
                lead.append(min(self.view.lead[i] if i < len(self.view.lead) else 0, step.shape[i] - 1))
        return tuple(lead)

    def _heads_of(self, step: Step):
        """The (heads, T_q, T_k) array of the step view's batch item."""
        import numpy as np  # lazy: numpy off the shape path

        axis = head_axis(step)
        lead = self._lead(step, 0)
        if axis is None:
            return np.asarray(step.output[lead] if lead else step.output)[None]
        index = tuple(slice(None) if i == axis else x for i, x in enumerate(lead))
        return step.output[index]

    def _kv(self, step: Step) -> dict[int, int] | None:
        """Query head → the key/value head it shares, read from the block's repeat_kv step (llama's GQA)."""
        rep = [s for s in self.view.trace if s.op == "repeat_kv" and s.group == step.group]
        if not rep:
            return None
        n = int(rep[0].attrs.get("n", 1))
        return {h: h // n for h in range(step.shape[head_axis(step)])} if n > 1 else None

    def _page(self) -> tuple[list[int], list[int]]:
        geo = self.geo
        assert geo is not None
        lp, hp = geo.layers_per_page, geo.heads_per_page
        first_row, first_head = (self.row // lp) * lp, (self.head // hp) * hp
        return (list(range(first_row, min(len(self.patterns), first_row + lp))),
                list(range(first_head, min(self.n_heads, first_head + hp))))

    def _key(self, row: int) -> Key:
        assert self.geo is not None
        step = self.patterns[row]
        return (step.index, self._lead(step, 0),
                (min(step.shape[-2], 2 * self.geo.tile_h), min(step.shape[-1], self.geo.tile_w)))

    def _pool_row(self, row: int) -> None:
        key = self._key(row)
        if key not in self.pooled:
            self.pooled[key] = pool(self._heads_of(self.patterns[row]), *key[2])

    def _title(self) -> Text:
        step = self.patterns[self.row]
        rows, heads = self._page()
        n_q, n_k = step.shape[-2:]
        t = Text.assemble((f"Attention patterns: {len(self.patterns)} × {self.n_heads} heads", "bold"),
                          f" (rows: {'–'.join(dict.fromkeys(row_label(self.patterns[r]) for r in (rows[0], rows[-1])))}"
                          f"{'' if len(rows) == len(self.patterns) else f' of {len(self.patterns)}'}"
                          f"{'' if len(heads) == self.n_heads else f'; heads {heads[0]}–{heads[-1]}'}), "
                          "queries down, keys across")
        pooled = self.pooled.get(self._key(self.row))
        if pooled and pooled[0].block != (1, 1):
            q, k = pooled[0].block
            t.append(f"; {n_q}×{n_k} drawn {len(pooled[0].row_edges) - 1}×{len(pooled[0].col_edges) - 1}: "
                     f"each cell the largest weight of up to {q}×{k} (max-pool)", "yellow")
        scale = {"row": "each row's own min–max", "slice": "each tile's own min–max"}.get(self.view.scale,
                                                                                          "[0, 1]")
        t.append(f". Colours on {scale}; grey: masked (all 0).")
        if self._kv(step):
            t.append(" kv: the key/value head each query head shares (grouped-query attention).")
        t.append("\n")
        t.append("←↑↓→ choose · H J K L move the + cell · Enter opens · z values · n/p page · c svg · Esc closes", "dim")
        return t

    def picture_name(self) -> str:
        """``heads gpt``, and the page's rows when the grid is paged (``heads llama L4-L7``)."""
        rows = self._page()[0] if self.geo is not None else list(range(len(self.patterns)))
        paged = f" {row_label(self.patterns[rows[0]])}-{row_label(self.patterns[rows[-1]])}"
        return f"heads {self.view.trace.config.model}" + (paged if len(rows) < len(self.patterns) else "")

    def _foot(self) -> Text:
        step = self.patterns[self.row]
        q, k = min(self.cell[0], step.shape[-2] - 1), min(self.cell[1], step.shape[-1] - 1)
        value = float(step.output[self._lead(step, self.head) + (q, k)])
        words = axis_labels(self.view.trace, step, len(step.shape) - 2, self._lead(step, self.head)) or []
        keys = axis_labels(self.view.trace, step, len(step.shape) - 1, self._lead(step, self.head)) or []
        qw = f" '{words[q]}'" if q < len(words) else ""
        kw = f" '{keys[k]}'" if k < len(keys) else ""
        kv = self._kv(step)
        shares = f" (shares key/value head {kv[self.head]})" if kv else ""
        return Text.assemble((f"{row_label(step)} head {self.head}{shares}", "bold"),
                             f"  {step.name}[…, {q}, {k}]: query {q}{qw}, key {k}{kw} = ",
                             (num(value, self.view.precision), "bold green"))

    def _grid(self) -> Text:
        if self.geo is None:
            return Text("")
        rows, heads = self._page()
        tiles = {}
        for r in rows:
            pooled = self.pooled.get(self._key(r))
            for h in heads:
                tiles[(r, h)] = pooled[h] if pooled and h < len(pooled) else None
        kv = self._kv(self.patterns[rows[0]])
        grid = draw_grid(tiles, rows, heads, self.geo, self.n, selected=(self.row, self.head),
                         cursor=self.cell, scale_mode=self.view.scale, kv=kv,
                         labels={r: row_label(self.patterns[r]) for r in rows}, words=self._words(rows))
        return grid

    def _words(self, rows: list[int]) -> dict[int, tuple[list[str], list[str]]]:
        """Each pattern row's (query words, key words): the axes the tiles draw."""
        def of(step: Step, axis: int) -> list[str]:
            return axis_labels(self.view.trace, step, axis, self._lead(step, self.head)) or []
        return {r: (of(s, len(s.shape) - 2), of(s, len(s.shape) - 1)) for r in rows if (s := self.patterns[r])}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("", id="grid-title")
            yield Static("", id="grid")
            yield Static("", id="grid-foot")

    def on_resize(self) -> None:  # also the first layout: a screen gets its size as a resize
        self._layout()

    def _layout(self) -> None:
        width = max(self.size.width - 4, 10)  # border and padding
        kv_row = 1 if self._kv(self.patterns[0]) else 0
        for _ in range(2):  # the title says how the page is pooled, and its lines take from the grid's height
            title = len(self._title().wrap(self.app.console, width)) if self.geo is not None else 3
            height = self.size.height - 2 - title - 1 - 1  # border, title, foot, the keys' words
            words = max((len(w) for w in self._words([0])[0][0]), default=0)  # right of the tiles: 'the/cat'
            self.geo = geometry(len(self.patterns), self.n_heads, self.n, width - min(2 * words + 2, 13),
                                max(height - kv_row, 3))
            self._fill(redraw=False)
        self._redraw()

    def _fill(self, redraw: bool = True) -> None:
        """Pool the page's patterns (at once when small, else in a thread), then draw."""
        rows, heads = self._page()
        todo = [r for r in rows if self._key(r) not in self.pooled and self._key(r) not in self._pending]
        size = sum(self.patterns[r].output.size for r in todo)
        if size <= SYNC_VALUES:
            for r in todo:
                self._pool_row(r)
        elif todo:
            self._pending.update(self._key(r) for r in todo)
            self.call_after_refresh(self._pool_rows, todo)  # the dotted page first: the thread would delay it
        if redraw:
            self._redraw()

    @work(thread=True, exclusive=False)
    def _pool_rows(self, rows: list[int]) -> None:
        for r in rows:
            self._pool_row(r)
            self._pending.discard(self._key(r))
            self.app.call_from_thread(self._redraw)

    def _redraw(self) -> None:
        if not self.is_attached:
            return
        self.query_one("#grid-title", Static).update(self._title())
        self.query_one("#grid", Static).update(self._grid())
        self.query_one("#grid-foot", Static).update(self._foot())

    # -- actions -------------------------------------------------------------------------------------------
    def action_choose(self, d_row: int, d_head: int) -> None:
        row, head = self.row + d_row, self.head + d_head
        if not (0 <= row < len(self.patterns) and 0 <= head < self.n_heads):
            return
        page = self._page()
        self.row, self.head = row, head
        if self._page() != page:
            self._fill()
        else:
            self._redraw()

    def action_cell(self, d_row: int, d_col: int) -> None:
        n_q, n_k = self.patterns[self.row].shape[-2:]
        self.cell = (max(0, min(n_q - 1, self.cell[0] + d_row)), max(0, min(n_k - 1, self.cell[1] + d_col)))
        self._redraw()

    def action_page(self, delta: int) -> None:
        assert self.geo is not None
        row = self.row + delta * self.geo.layers_per_page
        if not 0 <= row < len(self.patterns):
            row = max(0, min(len(self.patterns) - 1, row))
            if row == self.row:
                self.notify(f"no {'later' if delta > 0 else 'earlier'} page", timeout=2)
                return
        self.row = row
        self._fill()

    def _chosen(self) -> View:
        step = self.patterns[self.row]
        n_q, n_k = step.shape[-2:]
        cell = (min(self.cell[0], n_q - 1), min(self.cell[1], n_k - 1))
        return replace(self.view, index=step.index, lead=self._lead(step, self.head), cell=cell)

    def action_open(self) -> None:
        self.dismiss(self._chosen())

    def action_zoom(self) -> None:
        def back(view: View | None) -> None:  # Enter there opens a head in the step view: so does the grid
            if view is not None:
                self.dismiss(view)

        self.app.push_screen(LayerHeadsScreen(self._chosen()), back)
