"""The report of ``explain shapes``: every step's shapes and every parameter's, read from a shape-only trace.

:func:`select` picks the steps and parameters to show, :func:`shapes_text` lays them out as plain aligned text
(for people) and :func:`shapes_doc` as one JSON-ready dict (for scripts). The trace comes from
:func:`explain.engine.api.plan`, which runs the model code on shapes alone: every step's shape and ``signature`` was
written by its op's own shape rule, so nothing here computes a shape. Parameters are grouped by layer (their
dotted parent: ``blocks.0.attn.W_Q`` is in ``blocks.0.attn``; a table at the top of the model, like ``W_E``,
in the step that reads it, ``embed``).

This module imports neither numpy nor rich nor click, so ``explain shapes`` starts about as fast as click does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explain import ops
from explain.core.errors import UsageError
from explain.core.moe import ACTIVE_RULE, active_params
from explain.core.names import block_of, in_training, name_matches
from explain.core.shape_rules import fmt_shape
from explain.trace import ParamSpec, Step, Trace


@dataclass
class Selection:
    """What to show: steps and parameter specs, in trace order, with each parameter's layer and readers."""

    trace: Trace
    steps: list[Step]
    params: list[ParamSpec]
    layer: dict[str, str]  # parameter name -> layer name
    readers: dict[str, list[str]]  # parameter name -> names of the steps that read it


def _readers(trace: Trace) -> dict[str, list[str]]:
    """The forward steps that read each parameter (a parameter read by two is tied; its gradient and update
    steps read it too, but that is the backward pass, not tying)."""
    out: dict[str, list[str]] = {name: [] for name in trace.specs}
    for step in trace:
        if in_training(step.group):
            continue
        for name in step.inputs:
            if name in out:
                out[name].append(step.name)
    return out


def _stacks(trace: Trace) -> set[str]:
    """The model and its stacks of blocks: ``""`` and, for the encoder-decoder, ``encoder`` and ``decoder``."""
    return {""} | {b[0].rstrip(".") for b in map(block_of, trace.specs) if b}


def layer_of(name: str, readers: dict[str, list[str]], stacks: set[str]) -> str:
    """The layer a parameter belongs to: its dotted parent (``blocks.0.ln1.w`` → ``blocks.0.ln1``), unless the
    parent is the model itself or one of its ``stacks`` (``W_E``, ``encoder.W_E``): then the first step that
    reads it (``embed``, ``encoder.embed``), since a table at the top of a model belongs to no block."""
    parent = name.rpartition(".")[0]
    if parent not in stacks:
        return parent
    read_by = readers.get(name) or []
    if len({r.split(".")[0] for r in read_by if r.split(".")[0] in stacks}) > 1:
        return "embed"  # one matrix the encoder and the decoder both read (tied embeddings, §3.4), as gpt's W_E
    return read_by[0] if read_by else (parent or name)


def select(trace: Trace, match: str | None = None, steps: bool = True, params: bool = True) -> Selection:
    """The steps and parameters of ``trace`` to show; ``match`` keeps the names it matches (a parameter also
    matches by its layer). A pattern that matches nothing is a UsageError that shows what names look like."""
    readers = _readers(trace)
    stacks = _stacks(trace)
    layer = {name: layer_of(name, readers, stacks) for name in trace.specs}
    chosen_steps = [s for s in trace if match is None or name_matches(match, s.name)]
    chosen_params = [p for p in trace.specs.values() if match is None or name_matches(match, p.name, layer[p.name])]
    if match is not None and not chosen_steps and not chosen_params:
        examples = ", ".join(s.name for s in trace.steps[1:4])
        raise UsageError(f"--match '{match}' matches no step or parameter of this {trace.config.model}; names "
                         f"look like {examples} (a glob such as 'blocks.0.*' or a prefix such as 'blocks.0')")
    return Selection(trace, chosen_steps if steps else [], chosen_params if params else [], layer, readers)


def layer_totals(sel: Selection) -> list[tuple[str, int, list[ParamSpec]]]:
    """(layer, number of values, specs) for every layer of the selected parameters, in declaration order."""
    groups: dict[str, list[ParamSpec]] = {}
    for spec in sel.params:
        groups.setdefault(sel.layer[spec.name], []).append(spec)
    return [(name, sum(s.size for s in specs), specs) for name, specs in groups.items()]


@dataclass
class _Part:
    """A term of the total: a layer outside the blocks, or a run of equal blocks ``prefix`` blocks.first–last."""

    label: str
    size: int
    prefix: str | None = None  # "" or "encoder." for a block; None for a layer outside the blocks
    first: int = 0
    last: int = 0

    def text(self) -> str:
        if self.prefix is not None and self.last > self.first:
            return f"{self.prefix}blocks.{self.first}–{self.last} {self.last - self.first + 1} × {self.size:,}"
        return f"{self.label} {self.size:,}"


def breakdown(trace: Trace, layer: dict[str, str]) -> str:
    """The total as a sum of its parts, blocks of equal size folded:
    ``embed 38,597,376 + pos_embed 786,432 + blocks.0–11 12 × 7,087,872 + ln_final 1,536``."""
    units: list[_Part] = []
    for spec in trace.specs.values():
        m = block_of(layer[spec.name])
        label = f"{m[0]}blocks.{m[1]}" if m else layer[spec.name]
        if units and units[-1].label == label:
            units[-1].size += spec.size
        elif m:
            units.append(_Part(label, spec.size, m[0], m[1], m[1]))
        else:
            units.append(_Part(label, spec.size))
    folded: list[_Part] = []
    for u in units:
        last = folded[-1] if folded else None
        if (last is not None and u.prefix is not None and last.prefix == u.prefix and last.size == u.size
                and u.first == last.last + 1):
            last.last = u.first
        else:
            folded.append(u)
    return " + ".join(p.text() for p in folded)


def _table(rows: list[tuple[str, ...]], right: set[int]) -> list[str]:
    """Rows as aligned text; columns in ``right`` are right-aligned, the last column is not padded."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def _tokens(labels: list[str], limit: int = 12) -> str:
    shown = labels if len(labels) <= limit else labels[: limit - 2] + ["…"] + labels[-1:]
    return " ".join(shown)


def header(trace: Trace, show_tokens: bool = True) -> list[str]:
    """The config in one line, only the dimensions this model has, and the input in another."""
    cfg = trace.config
    parts = [f"d_model {cfg.d_model}"]
    if any("head" in s.axes for s in trace):
        parts.append(f"{cfg.n_heads} heads × d_head {cfg.head_dim}")
    if cfg.attention == "mla":
        lat = cfg.latent
        parts.append(f"latent attention (q rank {lat.q_lora_rank}, kv rank {lat.kv_lora_rank}, rope "
                     f"{lat.qk_rope_head_dim}, v {lat.v_head_dim}; cache {lat.cache_per_token():,} numbers per token "
                     f"per layer, {lat.plain_cache_per_token(cfg.n_heads):,} without the latent)")
    if any("d_ff" in p.axes for p in trace.specs.values()):
        parts.append(f"d_ff {cfg.ff_dim}")
    if any(".blocks." in "." + s.name for s in trace):
        parts.append(f"{cfg.n_layers} layers")
    if cfg.n_experts is not None:
        shared = f" + {cfg.n_shared_experts} shared" if cfg.n_shared_experts else ""
        width = f" of d_ff {cfg.expert_dim}" if cfg.expert_dim != cfg.ff_dim else ""
        parts.append(f"{cfg.n_experts} experts{shared}{width}, {cfg.experts_per_token} per token")
    if any("vocab" in p.axes for p in trace.specs.values()):  # given embeddings replace the vocabulary
        parts.append(f"vocab {cfg.d_vocab}")
    if "W_pos" in trace.specs:
        parts.append(f"context {cfg.n_ctx}")
    first = trace.steps[0]
    pos = trace.labels.get("pos") or []
    batch = f"batch {first.shape[0]} × " if first.axes[:1] == ("batch",) else ""
    line = f"input: {batch}{len(pos)} tokens"
    if show_tokens and pos:
        line += f" ({_tokens(pos)})"
    tgt = trace.labels.get("tgt")
    if tgt:
        line += f"; decoder input: {len(tgt)} tokens" + (f" ({_tokens(tgt)})" if show_tokens else "")
    return [f"{cfg.model}: " + ", ".join(parts), line]


def shapes_text(sel: Selection, show_tokens: bool = True) -> str:
    """The whole report as plain aligned text: header, steps, parameters by layer, and the total."""
    trace = sel.trace
    lines = header(trace, show_tokens)
    if sel.steps:
        lines += ["", f"steps ({len(sel.steps)} of {len(trace)})" if len(sel.steps) < len(trace)
                  else f"steps ({len(trace)})"]
        rows = [("#", "step", "op", "operand shapes → output shape")]
        rows += [(str(s.index + 1), s.name, s.op, s.signature) for s in sel.steps]  # from 1, as the TUI and --plain
        lines += _table(rows, right={0})
    if sel.params:
        groups = layer_totals(sel)
        lines += ["", f"parameters ({len(sel.params)} tensors in {len(groups)} layer{'s' if len(groups) != 1 else ''})"]
        rows = [("layer / parameter", "shape", "values", "")]
        for name, size, specs in groups:
            rows.append((name, "", f"{size:,}", ""))
            for spec in specs:
                others = [r for r in sel.readers[spec.name] if r != sel.readers[spec.name][0]]
                note = f"also read by {', '.join(others)} (tied)" if others else ""
                rows.append(("  " + spec.name, fmt_shape(spec.shape), f"{spec.size:,}", note))
        lines += _table(rows, right={2})
    total, fixed = trace.n_params, unreached(trace)
    lines += [""]
    shown = sum(s.size for s in sel.params)
    if sel.params and shown != total:
        lines.append(f"shown: {shown:,} of the {total:,} parameters")
    if fixed:  # DeepSeek's choosing biases: not parameters to transformers (which counts 671,026,404,352 for V3)
        size = sum(s.size for s in fixed)
        total -= size
        more = f" and {len(fixed) - 1} more" if len(fixed) > 1 else ""
        lines.append(f"total: {total:,} parameters, and {size:,} numbers no gradient reaches ({fixed[0].name}{more}: "
                     f"set by a rule of their own, buffers to transformers); together {trace.n_params:,}")
    else:
        lines.append(f"total: {total:,} parameters")
    if trace.specs:
        lines += _wrap_sum(breakdown(trace, sel.layer).split(" + "))
    active = active_params(trace.config, total)
    if active != total:  # a mixture of experts: the rule beside the figure
        lines += [f"active: {active:,} parameters per token", f"  ({ACTIVE_RULE})"]
    return "\n".join(lines)


def unreached(trace: Trace) -> list[ParamSpec]:
    """The parameters no gradient reaches: forward steps read them, each where its op passes none back (the
    sigmoid router's choosing bias, DeepSeek-V3's e_score_correction_bias, a buffer to transformers). A parameter
    no step reads is a parameter still (BertModel's pooler, carried by ``bert`` but not used by its sentence head)."""
    forward = [step for step in trace if not in_training(step.group) and step.op != "input"]
    read = {name for step in forward for name in step.inputs}
    reached = {step.inputs[i] for step in forward for i in ops.get(step.op).grad_inputs(len(step.inputs))}
    return [spec for spec in trace.specs.values() if spec.name in read and spec.name not in reached]


def _wrap_sum(parts: list[str], width: int = 118) -> list[str]:
    """``  = a + b + …`` on as few lines as fit in ``width``, continuation lines starting ``  + ``."""
    out = ["  = " + parts[0]]
    for part in parts[1:]:
        if len(out[-1]) + 3 + len(part) > width:
            out.append("  + " + part)
        else:
            out[-1] += " + " + part
    return out


def shapes_doc(sel: Selection) -> dict[str, Any]:
    """The report as one JSON-ready dict: config, tokens, steps (with operand and output shapes, signature,
    formula), parameters (with layer and size), layer totals, and ``n_params``, the whole model's total (the
    numbers no gradient reaches apart, as ``n_fixed``)."""
    trace = sel.trace
    fixed = sum(spec.size for spec in unreached(trace))
    return {
        "model": trace.config.model,
        "config": trace.config.to_dict(),
        "tokens": trace.labels.get("pos", []),
        "steps": [
            {"index": s.index, "name": s.name, "op": s.op, "inputs": list(s.inputs),
             "input_shapes": [list(trace.shape_of(n)) for n in s.inputs], "shape": list(s.shape),
             "axes": list(s.axes), "signature": s.signature, "formula": s.formula}
            for s in sel.steps
        ],
        "params": [
            {"name": p.name, "layer": sel.layer[p.name], "shape": list(p.shape), "axes": list(p.axes),
             "size": p.size, "read_by": sel.readers[p.name]}
            for p in sel.params
        ],
        "layers": [{"name": name, "size": size} for name, size, _ in layer_totals(sel)],
        "n_params": trace.n_params - fixed,  # as transformers counts them: no buffers
        **({"n_fixed": fixed} if fixed else {}),  # numbers no gradient reaches (a router's choosing bias)
        **({"n_active": active_params(trace.config, trace.n_params - fixed), "active_rule": ACTIVE_RULE}
           if trace.config.n_experts is not None else {}),
    }


__all__ = ["Selection", "select", "layer_of", "layer_totals", "breakdown", "header", "shapes_text", "shapes_doc"]
