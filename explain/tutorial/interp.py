"""A tutorial's ``[interp]`` table: the interpretability steps recorded after its run (:mod:`explain.interp`), so
its stops can show the logit lens, an attribution or a patched run like any other step::

    [interp]
    lens = true                      # lens.POINT.ln_final / .logits / .probs after each block and attention
    attribute = ["mat", "log"]       # attrib.*: logit[mat] − logit[log] at the last position (or one word)

    [interp.patch]                   # the tutorial's run becomes the corrupted run, patched from its own text
    corrupt = "the dog sat on the"
    word = "mat"
    vs = "log"
    step = "blocks.0.resid_post"
    position = 1                     # optional; head = 2 for a step with heads

:func:`parse` checks the table's types (with the file's line, the field and a fix, as every tutorial error);
:func:`record` records the steps, after the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from explain.trace import Trace

if TYPE_CHECKING:
    from explain.engine.ask import Request

KEYS = ("lens", "attribute", "patch")
PATCH_KEYS = ("corrupt", "word", "vs", "step", "position", "head")


def parse(parser: Any, d: Any) -> dict[str, Any]:
    """The ``[interp]`` table, its types checked by ``parser`` (a :class:`explain.tutorial.schema` parser)."""
    if not isinstance(d, dict):
        raise parser.fail("[interp] must be a table", "write [interp] on its own line, then lens = true",
                          field="interp")
    parser.unknown(d, KEYS, "[interp]", prefix="interp.")
    out: dict[str, Any] = {}
    if "lens" in d:
        if not isinstance(d["lens"], bool):
            raise parser.fail(f"must be true or false, got {d['lens']!r}", "write lens = true", field="interp.lens")
        out["lens"] = d["lens"]
    if "attribute" in d:
        v = d["attribute"]
        words = [v] if isinstance(v, str) else v
        if not (isinstance(words, list) and 1 <= len(words) <= 2 and all(isinstance(w, str) and w for w in words)):
            raise parser.fail(f"must be a word or [word, other word], got {v!r}", 'write attribute = ["mat", "log"]',
                              field="interp.attribute")
        out["attribute"] = list(words)
    if "patch" in d:
        p = d["patch"]
        if not isinstance(p, dict):
            raise parser.fail("[interp.patch] must be a table", "write [interp.patch], then corrupt, word, vs, step",
                              field="interp.patch")
        parser.unknown(p, PATCH_KEYS, "[interp.patch]", prefix="interp.patch.")
        patch: dict[str, Any] = {}
        for key in ("corrupt", "word", "vs", "step"):
            patch[key] = parser.text(p, key, required=True, field=f"interp.patch.{key}", example="…")
        for key in ("position", "head"):
            if key in p:
                patch[key] = parser.count(p[key], f"interp.patch.{key}", minimum=0)
        out["patch"] = patch
    return out


def record(req: Request, trace: Trace, spec: dict[str, Any]) -> Trace:
    """``trace`` (the run of ``req``) with the ``[interp]`` steps recorded after it (a patch first: the run becomes
    the patched one, its two runs made from the same request: the tutorial's weights and checkpoint, opened once)."""
    if not spec:
        return trace
    from explain.interp import attribution, lens, patching  # lazy: numpy's tools, only for a tutorial that asks
    from explain.interp.stream import tokenizer_of, word_id  # lazy: as above

    if "patch" in spec:
        p = spec["patch"]
        runs = patching.runs_of(req, p["corrupt"], p["word"], p["vs"])
        where = patching.where_of(runs.corrupt.find(p["step"]), p.get("position"), p.get("head"))
        one = patching.patch_runs(runs, p["step"], where)
        trace = one.trace
        trace.patched = one  # the TUI's P: this patch's numbers and the tutorial's sweep
    if spec.get("lens"):
        trace = lens.record_lens(trace)
    if "attribute" in spec:
        tok = tokenizer_of(req)
        ids = [word_id(w, tok, what) for w, what in zip(spec["attribute"], ("attribute", "attribute's second word"))]
        trace = attribution.record_attribution(trace, ids[0], ids[1] if len(ids) > 1 else None)
    return trace
