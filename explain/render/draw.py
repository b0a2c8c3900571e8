"""One draw as the live sampling screen shows it (:class:`explain.report.draw.Draw`): the top tokens as rows with their
words, each stage a column (z, z / T, p after the temperature with a bar, the top-k cut, the cumulative p top-p
adds up and its cut, the renormalised p the draw uses with a bar, the drawn token marked), and the arithmetic
under it for the token drawn. Every line fits ``width`` columns; the cost does not grow with the vocabulary
beyond the few rows shown."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.text import Text

from explain.ops.base import num
from explain.report.draw import Draw

BLOCKS = " ▏▎▍▌▋▊▉█"


def bar(p: float, width: int) -> str:
    """A bar of ``p`` ∈ [0, 1] in ``width`` columns, in eighths."""
    eighths = int(round(max(0.0, min(1.0, p)) * width * 8))
    full, part = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[part] if part else "")).ljust(width)[:width]


def word(vocab: Any, i: int, width: int) -> str:
    """``'mat'``: the token's label quoted (a leading ␣ stays visible), cut with … to ``width``."""
    label = vocab[i] if vocab is not None and 0 <= i < len(vocab) else f"#{i}"
    text = f"'{label}'"
    return text if len(text) <= width else text[:width - 2] + "…'"


def _p(x: float) -> str:
    """A probability in 7 columns: 4 decimals, or 2 significant digits when it would round to 0.0000."""
    return f"{x:.4f}" if x == 0 or x >= 0.00005 else f"{x:.1e}"


def _cum_before(d: Draw, v: int) -> float:
    """The probability (after top-k) of the tokens top-p ranks above ``v`` (larger, or tied and of lower id)."""
    x = d.after_k[v]
    above = (d.after_k > x) | ((d.after_k == x) & (np.arange(d.after_k.size) < v))
    return float(d.p_ranked[above].sum())


def columns(width: int, greedy: bool, rank_w: int = 4, words: int = 16) -> tuple[bool, int, int]:
    """(show z as well as z / T, the token column's width, each bar's width) at ``width`` columns, ranks
    ``rank_w`` wide, the longest quoted word shown ``words`` wide: the words come before the bars (a student
    reads the word; a bar of 3 columns still shows which p is larger), up to 16 columns."""
    fixed = rank_w + 1 + 8 + 8 + 1 + 8 + 8  # rank, z/T, p(T), the space after its bar, p drawn, "◀ drawn"
    if not greedy:
        fixed += 6 + 8 + 6  # top-k's cut, the cumulative p, top-p's cut
    show_z = width - fixed >= 8 + 13 + 2 * 10 and not greedy
    rest = width - fixed - (8 if show_z else 0)
    tok = max(6, min(16, words, rest - 1 - 2 * 3))
    bars = max(3, min(30, (rest - tok - 1) // 2))
    return show_z, tok, bars


def draw_table(d: Draw, vocab: Any, rows: int, width: int) -> Text:
    """A header line and up to ``rows`` tokens (the drawn one always among them), largest logit first."""
    greedy = d.greedy
    rw = max(4, len(str(d.logits.size)))  # the drawn token may rank 50,257th
    shown = d.top(max(1, rows))
    far = len(shown) > 1 and shown[-1] == d.token and d.rank(d.token) > d.rank(shown[-2]) + 1
    if far and rows > 2:  # a row for the … between the top tokens and the drawn one
        shown = d.top(rows - 1)
    show_z, tok, bars = columns(width, greedy, rw, max(len(word(vocab, v, 99)) for v in shown))
    head = f"{'rank':>{rw}} {'token':<{tok}} " + (f"{'z':>7} " if show_z else "") + \
        f"{'z/T' if not greedy else 'z':>7} {'p(T)' if not greedy else 'p':>7} {'':<{bars}} "
    head += f"{'top-k':<5} {'cum. p':>7} {'top-p':<5} " if not greedy else ""
    full = max(float(d.p_scaled[shown].max()), float(d.probs[shown].max()))
    full = 1.0 if full > 0.5 else full  # the bars' full width: p = 1, or the largest p shown when all are small
    head += f"{'p drawn':>7} " + (f"█ = {full:.2g}" if full < 1 else "")
    out = Text(head.rstrip()[:width], style="bold")
    rank, cum, before = 0, 0.0, None  # the top rows run down the ranks: their ranks and cum. p are running
    for i, v in enumerate(shown):
        line = Text("\n")
        if v == d.token and far and rows > 2:
            rank, cum = d.rank(v), _cum_before(d, v)  # the drawn token, further down: counted over the vocabulary
        else:
            rank = rank if before is not None and d.logits[v] == d.logits[before] else i + 1
            cum, before = (cum + float(d.p_ranked[before]) if before is not None else 0.0), v
        drawn = v == d.token
        if drawn and far and rows > 2:
            out.append(f"\n{'…':>{rw}}", style="dim")
        line.append(f"{rank:>{rw}} ")
        line.append(f"{word(vocab, v, tok):<{tok}} ", style="bold green" if drawn else "")
        if show_z:
            line.append(f"{num(d.logits[v]):>7} ")
        line.append(f"{num(d.scaled[v]):>7} {_p(d.p_scaled[v]):>7} ")
        line.append(bar(float(d.p_scaled[v]) / full, bars) + " ", style="blue")
        if not greedy:
            k_cut = not np.isfinite(d.after_k[v])
            line.append(f"{'cut' if k_cut else 'kept' if d.sampling.top_k else '—':<5} ",
                        style="red" if k_cut else "dim" if not d.sampling.top_k else "")
            p_cut = np.isfinite(d.after_k[v]) and not np.isfinite(d.after_p[v])
            line.append(f"{'—' if k_cut else _p(cum):>7} ", style="dim" if k_cut else "")
            line.append(f"{'cut' if p_cut else '' if k_cut else 'kept' if d.sampling.top_p is not None else '—':<5} ",
                        style="red" if p_cut else "dim" if d.sampling.top_p is None else "")
        cut = d.probs[v] == 0
        line.append(f"{_p(d.probs[v]):>7} ", style="dim" if cut else "bold")
        line.append(bar(float(d.probs[v]) / full, bars), style="green")
        if drawn:
            line.append(" ◀ drawn", style="bold green")
        if len(line) > width + 1:  # (right_crop(0) would empty it)
            line.right_crop(len(line) - width - 1)
        out.append_text(line)
    return out


def draw_arithmetic(d: Draw, vocab: Any, n: int) -> Text:
    """The arithmetic of the draw, for the token drawn: logits / T, the cuts, the renormalisation, the draw."""
    v, s = d.token, d.sampling
    w = word(vocab, v, 24)
    V = d.logits.size
    lines: list[Text] = []
    if d.greedy:
        lines.append(Text.assemble(("T = 0: ", "bold"), "greedy decoding, no division, no filters, no draw: ",
                                   (w, "bold green"), f" has the largest p = {_p(d.p_model[v])} (argmax)"))
        return Text("\n").join(lines)
    lines.append(Text.assemble(("z/T: ", "bold"), f"{w} {num(d.logits[v])} / {d.t:g} = {num(d.scaled[v])}",
                               ("  (T < 1 sharpens p, T > 1 flattens it)", "dim")))
    if s.top_k is None:
        lines.append(Text.assemble(("top-k off: ", "bold"), "nothing cut"))
    else:
        cut, held = V - d.kept(d.after_k), float(d.p_scaled[np.isfinite(d.after_k)].sum())
        lines.append(Text.assemble((f"top-k {s.top_k}: ", "bold"), f"z/T below the k-th largest ({num(d.kth)}) "
                                   f"→ −inf: {cut:,} of {V:,} cut; the kept hold {_p(held)} of p(T)"))
    if s.top_p is None:
        lines.append(Text.assemble(("top-p off: ", "bold"), "nothing cut"))
    else:
        m, cut = d.kept(d.after_p), d.kept(d.after_k) - d.kept(d.after_p)
        over = f" (p renormalised over top-k's {d.kept(d.after_k):,})" if s.top_k is not None else ""
        lines.append(Text.assemble((f"top-p {s.top_p:g}: ", "bold"), f"largest p first, kept while the cum. p before "
                                   f"is < {s.top_p:g}{over}: {m:,} kept, holding {_p(d.mass_kept)}; {cut:,} more cut"))
    kept = np.isfinite(d.after_p)
    total = float(d.p_scaled[kept].sum())
    lines.append(Text.assemble(("renormalised: ", "bold"), f"p drawn = p(T) / {_p(total)}, the sum of p(T) over the "
                               f"{int(kept.sum()):,} kept: {w} {_p(d.p_scaled[v])} / {_p(total)} = ",
                               (_p(d.probs[v]), "bold")))
    lo, hi, c = d.stretch()
    u = d.u or 0.0
    target = f"u·{_p(c)}" if abs(c - 1) > 1e-12 else "u"
    lines.append(Text.assemble(("draw: ", "bold"), f"u = {_p(u)} (seed [{s.seed}, {n}]); adding p drawn in id order, "
                               f"{target} falls in the share of {w}: {_p(lo)} ≤ {target} < {_p(hi)} → ",
                               (w, "bold green")))
    return Text("\n").join(lines)
