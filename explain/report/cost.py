"""What a model costs, read off a shape-only plan (``explain shapes --cost``): memory and arithmetic, each figure
with the formula that gives it, so the arithmetic is the lesson.

* Parameters: their count, and their bytes at float32, bfloat16 and the type they are stored in.
* The key/value cache: per token (2 · layers · key/value heads · d_head · bytes: multi-head, grouped-query or
  multi-query attention by the number of key/value heads) and at the sequence length.
* FLOPs per token of the forward pass, counted op by op from the plan: every step's contraction
  (:meth:`explain.ops.Op.flops`, 2 per multiply-add; the elementwise steps are not counted), grouped into the
  attention projections, the attention scores and weighted sum at the planned length, the MLP, and the LM head;
  a mixture of experts' layers from :func:`explain.core.moe.moe_cost` (k experts per token, not the E the plan
  computes). Training: the 6N rule, and 3 × the forward counted.
* Activation memory: every forward step's output, as a backward pass would keep them, at the batch size.

No numpy: this reads shapes only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from explain import ops
from explain.core.latent import latent_cost
from explain.core.names import block_of, in_training
from explain.report.shape_report import unreached
from explain.trace import Trace

OWN = "explain's own arrays"  # where a random model's float64 comes from
BYTES = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2, "float8": 1}
DTYPES = tuple(BYTES)

# the parts of the forward count, in order, by the step's name inside its block (TransformerLens names)
GROUPS = (
    ("attention q, k, v projections", re.compile(r"attn\.(q|k|v|q_a|kv_a|k_nope)$")),  # latent attention's too
    ("attention scores Q·Kᵀ", re.compile(r"attn\.scores(_nope|_rope)?$")),
    ("attention weighted sum A·V", re.compile(r"attn\.z$")),
    ("attention output projection", re.compile(r"attn_out$")),
    ("MLP", re.compile(r"mlp(\.|_out$)")),
    ("LM head (logits)", re.compile(r"^logits$")),
)


@dataclass(frozen=True)
class Figure:
    name: str
    value: int
    formula: str
    unit: str = ""  # "bytes", "FLOPs", "parameters"


@dataclass
class Section:
    title: str
    figures: list[Figure] = field(default_factory=list)


def size_text(n: int) -> str:
    """``4 GiB``, ``474.7 MiB``: bytes in binary units, exact when whole."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def _tokens(trace: Trace) -> tuple[int, int]:
    """(batch, positions) of the plan's input."""
    first = trace.steps[0]
    batch = first.shape[0] if first.axes[:1] == ("batch",) and first.shape else 1
    return batch, max(1, len(trace.labels.get("pos") or []) or (first.shape[-1] if first.shape else 1))


def _step_formula(step: Any, shapes: list[tuple[int, ...]], rows: int, window: int | None = None) -> str:
    """The FLOPs of one step per token, as arithmetic on its sizes (``window``: the keys a sliding layer reads)."""
    out = step.shape
    if step.op == "linear":
        return f"2·{shapes[0][-1]}·{out[-1]}"
    if step.op == "linear_heads":
        return f"2·{shapes[0][-1]}·{shapes[1][0]}·{shapes[1][-1]}"
    if step.op in ("matmul", "weighted_sum"):
        k, last = shapes[0][-1], out[-1]
        lead = math.prod(out) // max(1, rows * last)
        keys = last if step.op == "matmul" else k
        width = k if step.op == "matmul" else last
        keys = min(keys, window) if window else keys
        return f"2·{lead}·{keys}·{width}" if lead > 1 else f"2·{keys}·{width}"
    return f"2·{math.prod(out) // max(1, rows)}·{shapes[0][-1]}"


def forward_flops(trace: Trace, skip: Any = None) -> tuple[list[Figure], int]:
    """The forward's FLOPs per token by group, and their total; ``skip(step)`` leaves steps out. In a sliding
    layer the scores and the weighted sum count the window's keys only: the plan computes every key and masks
    those outside the window, a windowed kernel does not compute them."""
    batch, positions = _tokens(trace)
    rows = batch * positions
    windows = _windows(trace.config)
    groups: dict[str, list[tuple[int, str, str]]] = {}
    for step in trace.steps:
        if in_training(step.group) or (skip is not None and skip(step)):
            continue
        shapes = [trace.shape_of(n) for n in step.inputs]
        total = ops.get(step.op).flops(shapes, step.shape, **step.attrs)
        if not total:
            continue
        where = block_of(step.name)
        inner = where[2] if where and where[2] else step.name  # the step's name within its block
        label = next((g for g, pattern in GROUPS if pattern.search(inner)), "other matmuls")
        window = windows.get(where[1]) if where and where[2] and step.op in ("matmul", "weighted_sum") else None
        if window and window < positions:
            total = total * window // positions  # the keys a sliding layer reads
        groups.setdefault(label, []).append((total, _step_formula(step, shapes, rows, window),
                                             str(where[1]) if where and where[2] else ""))
    order = [g for g, _ in GROUPS] + ["other matmuls"]
    figures = []
    for label in order:
        items = groups.get(label)
        if not items:
            continue
        value = sum(t for t, _, _ in items) // rows
        figures_in: dict[str, list[str]] = {}
        for _, f, block in items:
            figures_in.setdefault(block, []).append(f)
        kinds: dict[tuple[str, ...], int] = {}
        for v in figures_in.values():
            kinds[tuple(v)] = kinds.get(tuple(v), 0) + 1
        parts = []
        for terms, n in kinds.items():
            one = _terms(terms)
            parts.append(one if n == 1 and len(figures_in) == 1 else
                         f"{n} layer{'s' if n > 1 else ''} × {one if '+' not in one else '(' + one + ')'}")
        formula = " + ".join(parts)
        figures.append(Figure(label, value, formula, "FLOPs"))
    return figures, sum(f.value for f in figures)


def _windows(cfg: Any) -> dict[int, int]:
    """Block index → its sliding window, for the sliding layers."""
    if getattr(cfg, "sliding_window", None) is None:
        return {}
    from explain.core.window import FULL, layer_kinds  # lazy: only for models with those layers

    return {i: cfg.sliding_window for i, kind in enumerate(layer_kinds(cfg)) if kind != FULL}


def _terms(formulas: list[str] | tuple[str, ...]) -> str:
    """``3 × 2·768·768 + 2·768·3072``: equal terms counted."""
    counts = dict.fromkeys(formulas, 0)
    for f in formulas:
        counts[f] += 1
    return " + ".join(f if c == 1 else f"{c} × {f}" for f, c in counts.items())


def cache_section(cfg: Any, positions: int, batch: int, dtype: str, why: str) -> Section:
    """The key/value cache: per token, and at ``positions`` tokens (× ``batch`` sequences)."""
    b = BYTES[dtype]
    if cfg.attention == "mla":
        return latent_cache_section(cfg, positions, batch, dtype, why)
    L, kv, heads, dh = cfg.n_layers, cfg.kv_heads, cfg.n_heads, cfg.head_dim
    kind = ("multi-head attention: a key/value head per query head" if kv == heads else
            "multi-query attention: 1 key/value head for all" if kv == 1 else
            f"grouped-query attention: {kv} key/value heads for {heads} query heads")
    per_token = 2 * L * kv * dh * b
    if getattr(cfg, "sliding_window", None) is not None:
        return window_cache_section(cfg, positions, batch, dtype, why, kind)
    sec = Section(f"key/value cache ({kind}), at {dtype} ({why})")
    sec.figures.append(Figure("per token", per_token, f"2 (K, V) · layers · kv heads · d_head · bytes = "
                                                      f"2·{L}·{kv}·{dh}·{b}", "bytes"))
    seqs = f" × {batch} sequences" if batch > 1 else ""
    sec.figures.append(Figure(f"at {positions:,} tokens" + (f", batch {batch}" if batch > 1 else ""),
                              per_token * positions * batch, f"{per_token:,} × {positions:,}{seqs}", "bytes"))
    return sec


def window_cache_section(cfg: Any, positions: int, batch: int, dtype: str, why: str, kind: str) -> Section:
    """A cache with sliding layers (:mod:`explain.core.window`): a full layer keeps every token, a sliding layer
    only the last ``window`` (Gemma 3: five sliding layers to one full; Mistral: every layer sliding)."""
    from explain.core.window import FULL, layer_kinds  # lazy: only for models with those layers

    b, kv, dh, w = BYTES[dtype], cfg.kv_heads, cfg.head_dim, cfg.sliding_window
    kinds = layer_kinds(cfg)
    full, sliding = sum(k == FULL for k in kinds), sum(k != FULL for k in kinds)
    layer = 2 * kv * dh * b
    kept = min(positions, w)
    sec = Section(f"key/value cache ({kind}; {sliding} sliding layers of a {w:,}-token window, {full} full), at "
                  f"{dtype} ({why})")
    seqs = f" × {batch} sequences" if batch > 1 else ""
    at = f"at {positions:,} tokens" + (f", batch {batch}" if batch > 1 else "")
    sec.figures += [
        Figure("per token per layer", layer, f"2 (K, V) · kv heads · d_head · bytes = 2·{kv}·{dh}·{b}", "bytes"),
        Figure("per token, up to the window", layer * len(kinds), f"{len(kinds)} layers × {layer:,}", "bytes"),
        Figure("per token past the window", layer * full, f"{full} full layers × {layer:,} (a sliding layer drops "
                                                           "its oldest token)", "bytes"),
        Figure(at, (full * positions + sliding * kept) * layer * batch,
               f"(full layers · tokens + sliding layers · min(tokens, window)) × {layer:,} = ({full}·{positions:,} "
               f"+ {sliding}·{kept:,}) × {layer:,}{seqs}", "bytes"),
        Figure(f"{at}, every layer full", len(kinds) * positions * layer * batch,
               f"{len(kinds)}·{positions:,} × {layer:,}{seqs} (no window)", "bytes"),
    ]
    return sec


def latent_cache_section(cfg: Any, positions: int, batch: int, dtype: str, why: str) -> Section:
    """Latent attention's cache (:func:`explain.core.latent.latent_cost`): the latent and the rotary key of each
    token, against what plain multi-head attention with the same heads would keep."""
    b = BYTES[dtype]
    mla, mha, mla_bytes, mha_bytes = latent_cost(cfg, bytes_per_number=b)[:4]
    sec = Section(f"key/value cache (latent attention: one latent and one rotary key per token for every head), at "
                  f"{dtype} ({why})")
    sec.figures += [Figure("per token per layer", mla.value, mla.formula, "numbers"),
                    Figure("plain attention's, per token per layer", mha.value, mha.formula, "numbers"),
                    Figure("per token", mla_bytes.value, mla_bytes.formula, "bytes"),
                    Figure("plain attention's, per token", mha_bytes.value, mha_bytes.formula, "bytes")]
    seqs = f" × {batch} sequences" if batch > 1 else ""
    sec.figures.append(Figure(f"at {positions:,} tokens" + (f", batch {batch}" if batch > 1 else ""),
                              mla_bytes.value * positions * batch, f"{mla_bytes.value:,} × {positions:,}{seqs}",
                              "bytes"))
    return sec


def cost(trace: Trace, *, stored: str | None, stored_why: str, dtype: str | None, batch: int | None,
         cache: bool) -> list[Section]:
    """The sections of ``explain shapes --cost`` for a shape-only plan."""
    cfg = trace.config
    n = trace.n_params - sum(s.size for s in unreached(trace))  # as transformers counts: a choosing bias is a buffer
    plan_batch, positions = _tokens(trace)
    from_file = stored in BYTES and stored_why != OWN
    act_dtype = dtype or (stored if from_file else "float32")
    act_why = "--dtype" if dtype else stored_why if from_file else "PyTorch's default; --dtype for another"
    out: list[Section] = []

    params = Section("parameters")
    params.figures.append(Figure("parameters", n, _sum_text(trace), "parameters"))
    shown = ["float32", "bfloat16"]
    if stored in BYTES and stored not in shown:
        shown.append(stored)
    if dtype and dtype not in shown:
        shown.append(dtype)
    for d in shown:
        label = f"at {d}" + (f" ({stored_why})" if d == stored else "")
        params.figures.append(Figure(label, n * BYTES[d], f"N × {BYTES[d]} = {n:,} × {BYTES[d]}", "bytes"))
    if stored is not None and stored not in BYTES:
        params.figures.append(Figure(f"as stored ({stored})", 0, stored_why, ""))
    from explain.core.moe import ACTIVE_RULE, active_params, moe_cost  # lazy: only for models with those layers

    if getattr(cfg, "n_experts", None):
        active = active_params(cfg, n)
        params.figures.append(Figure("active per token", active, ACTIVE_RULE, "parameters"))
    out.append(params)

    if cache:
        out.append(cache_section(cfg, positions, batch or plan_batch, act_dtype, act_why))

    moe = moe_cost(cfg) if getattr(cfg, "n_experts", None) else []

    def in_mixture(step: Any) -> bool:
        block = block_of(step.name)
        return bool(moe) and block is not None and bool(block[2]) and cfg.moe_layer(block[1]) and ".mlp" in step.name

    figures, total = forward_flops(trace, in_mixture if moe else None)
    if moe:
        mixture = next(f for f in moe if f.name.startswith("mixture FLOPs"))
        figures.append(Figure("mixture of experts (k experts per token)", mixture.value, mixture.formula, "FLOPs"))
        total += mixture.value
    fwd = Section(f"forward FLOPs per token, at {positions:,} tokens (matmuls, 2 per multiply-add; elementwise "
                  "steps not counted)")
    fwd.figures = figures + [Figure("total", total, "the sum of the above", "FLOPs")]
    out.append(fwd)
    train = Section("training FLOPs per token")
    train.figures = [Figure("6N rule", 6 * n, f"6 · N = 6 × {n:,} (2N forward + 4N backward)", "FLOPs"),
                     Figure("3 × the forward counted", 3 * total, f"3 × {total:,} (the backward ≈ 2 forwards)",
                            "FLOPs")]
    out.append(train)

    values = sum(ops.get(s.op).stored_values(s.shape, [trace.shape_of(x) for x in s.inputs], **s.attrs)
                 for s in trace.steps if not in_training(s.group) and s.op != "input")
    per_seq = values // plan_batch
    b = batch or plan_batch
    act = Section(f"activation memory, {b} × {positions:,} tokens, at {act_dtype}")
    act.figures.append(Figure("every forward step's output", per_seq * b * BYTES[act_dtype],
                              f"{b} × {per_seq:,} values × {BYTES[act_dtype]} bytes (what a backward pass reads; "
                              "fused kernels keep fewer)", "bytes"))
    out.append(act)
    return out


def _sum_text(trace: Trace) -> str:
    from explain.report.shape_report import breakdown, select  # lazy: only for models with those layers

    sel = select(trace, None, False, True)
    return breakdown(trace, sel.layer)


def cost_lines(sections: list[Section]) -> list[str]:
    """The sections as aligned text: name, value (with its size in binary units for bytes), formula."""
    rows: list[tuple[str, str, str] | str] = []
    for sec in sections:
        rows.append(sec.title)
        for f in sec.figures:
            unit = f" {f.unit}" if f.unit and f.unit != "parameters" else ""
            value = f"{f.value:,}{unit}" + (f" ({size_text(f.value)})" if f.unit == "bytes" and f.value >= 2**10 else "")
            rows.append(("  " + f.name, value, f.formula))
    table = [r for r in rows if isinstance(r, tuple)]
    w_name = max(len(r[0]) for r in table)
    w_value = max(len(r[1]) for r in table)
    lines = []
    for r in rows:
        if isinstance(r, str):
            lines += ["", r]
        else:
            lines.append(f"{r[0]:<{w_name}}  {r[1]:>{w_value}}  {r[2]}".rstrip())
    return lines[1:]


def cost_doc(sections: list[Section]) -> list[dict[str, Any]]:
    return [{"title": s.title, "figures": [{"name": f.name, "value": f.value, "unit": f.unit, "formula": f.formula}
                                           for f in s.figures]} for s in sections]
