"""The parser of the tutorial format (:mod:`explain.tutorial.schema`): builds a :class:`Tutorial` from a TOML
document, refusing anything it does not know with a one-line error that names the file, line and field, and
the fix."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from explain.checkpoints.catalogue import CATALOGUE
from explain.core.errors import ExplainError
from explain.core.limits import MAX_INPUT_BYTES
from explain.core.options import GENERATION, OPTION
from explain.core.registry import MODELS
from explain.io.readers import regular_file
from explain.tutorial.arrays import to_array
from explain.tutorial.errors import Source
from explain.tutorial.interp import parse as parse_interp
from explain.tutorial.schema import (
    DEFAULT_TOL,
    EXPECT_KEYS,
    GENERATE_KEYS,
    NUMBER_EXPECTS,
    OPTION_KEYS,
    STOP_KEYS,
    TOP_KEYS,
    Expect,
    Stop,
    Tutorial,
)


class _Parser:
    """Builds a Tutorial from a TOML dict, with errors located in ``src``."""

    def __init__(self, src: Source) -> None:
        self.src = src

    def fail(self, what: str, fix: str, *, field: str | None = None, stop: int | None = None,
             step: str | None = None) -> Exception:
        return self.src.error(what, fix, field=field, stop=stop, step=step)

    def unknown(self, keys: dict, known: tuple[str, ...], where: str, *, stop: int | None = None,
                step: str | None = None, prefix: str = "") -> None:
        for key in keys:
            if key not in known:
                near = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean '{near[0]}'? " if near else ""
                raise self.fail(f"unknown key '{key}' in {where}", f"{hint}known keys: {', '.join(known)}",
                                field=prefix + key, stop=stop, step=step)

    def text(self, d: dict, key: str, *, required: bool, field: str | None = None, stop: int | None = None,
             step: str | None = None, example: str = "…") -> str | None:
        name = field or key
        if key not in d:
            if required:
                raise self.fail(f"missing '{key}'", f'add {key} = "{example}"', field=None, stop=stop, step=step)
            return None
        v = d[key]
        if not isinstance(v, str) or not v.strip():
            got = "an empty string" if isinstance(v, str) else f"{type(v).__name__} {v!r}"
            raise self.fail(f"'{key}' must be text, got {got}", f'write {key} = "{example}"', field=name,
                            stop=stop, step=step)
        return v

    def number(self, v: Any, name: str, *, stop: int | None = None, step: str | None = None) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(f"must be a number, got {type(v).__name__} {v!r}", f"write {name.split('.')[-1]} = 1.0",
                            field=name, stop=stop, step=step)
        if v != v:  # NaN compares unequal to everything: an expectation or tolerance of nan checks nothing
            raise self.fail("is nan, which no number equals", f"write {name.split('.')[-1]} = a number",
                            field=name, stop=stop, step=step)
        return float(v)

    def count(self, v: Any, name: str, *, minimum: int = 1, stop: int | None = None, step: str | None = None) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            example = v.strip() if isinstance(v, str) and v.strip().isdigit() else max(minimum, 1)
            raise self.fail(f"must be a whole number ≥ {minimum}, got {v!r}",
                            f"write {name.split('.')[-1]} = {example} (a number, no quotes)", field=name, stop=stop,
                            step=step)
        return v

    def index(self, v: Any, name: str, *, stop: int | None = None, step: str | None = None,
              cell: bool = False) -> tuple:
        example = "[1, 0]" if cell else '[1] or [":", 0]'
        ok = isinstance(v, list) and all((isinstance(i, int) and not isinstance(i, bool) and i >= 0) or
                                         (not cell and i == ":") for i in v)
        if not ok or (cell and not v):
            kind = "whole numbers ≥ 0" if cell else 'whole numbers ≥ 0 or ":" (a whole axis)'
            raise self.fail(f"must be a list of {kind}, got {v!r}", f"write {name.split('.')[-1]} = {example}",
                            field=name, stop=stop, step=step)
        return tuple(v)

    # -- the document -----------------------------------------------------------------------------------
    def tutorial(self, data: dict, name: str, path: Path | None) -> Tutorial:
        self.unknown(data, TOP_KEYS, "the tutorial")
        title = self.text(data, "title", required=True, example="Attention without weights")
        summary = self.text(data, "summary", required=True, example="one sentence: what the student learns")
        model = self.text(data, "model", required=True, example="attention")
        if model not in MODELS:
            near = difflib.get_close_matches(model, MODELS, n=1)
            hint = f"did you mean '{near[0]}'? " if near else ""
            raise self.fail(f"unknown model '{model}'", f"{hint}choose one of: {', '.join(MODELS)}", field="model")
        tol = self.number(data["tol"], "tol") if "tol" in data else DEFAULT_TOL
        if not 0 <= tol < float("inf"):
            raise self.fail(f"tol must be a finite number ≥ 0, got {tol}", "write tol = 5e-5", field="tol")
        options, embeddings = self.options(data.get("options", {}), path)
        weights = self.weights(data.get("weights", {}), path)
        stops_data = data.get("stops")
        if not isinstance(stops_data, list) or not stops_data:
            raise self.fail("the tutorial has no stops", "add at least one [[stops]] table with step, title and "
                            "narration")
        stops = [self.stop(s, i, tol) for i, s in enumerate(stops_data)]
        return Tutorial(name, title, summary, model, stops, options, embeddings, weights, path, tol, self.src,
                        self.generation(data.get("generate", {})), parse_interp(self, data.get("interp", {})))

    def generation(self, d: Any) -> dict[str, Any]:
        """The [generate] table: max_new_tokens, temperature (a number, or one per text of the batch), top_k,
        top_p, greedy; checked here for types, and by explain.core.sampling.make_sampling for values."""
        if not isinstance(d, dict):
            raise self.fail("[generate] must be a table", "write [generate] on its own line, then max_new_tokens = 3",
                            field="generate")
        self.unknown(d, GENERATE_KEYS, "[generate]", prefix="generate.")
        out: dict[str, Any] = {}
        for key, v in d.items():
            f = f"generate.{key}"
            kind = next(o.type for o in GENERATION if o.name == key)
            if kind == "int":
                out[key] = self.count(v, f)
            elif kind == "flag":
                if not isinstance(v, bool):
                    raise self.fail(f"must be true or false, got {v!r}", "write greedy = true", field=f)
                out[key] = v
            elif key == "temperature" and isinstance(v, list):
                out[key] = [self.number(x, f) for x in v]
            else:
                out[key] = self.number(v, f)
        return out

    def options(self, d: Any, path: Path | None) -> tuple[dict[str, Any], Any]:
        if not isinstance(d, dict):
            raise self.fail("[options] must be a table", "write [options] on its own line, then key = value lines",
                            field="options")
        self.unknown(d, OPTION_KEYS, "[options]", prefix="options.")
        out: dict[str, Any] = {}
        embeddings = None
        for key, v in d.items():
            f = f"options.{key}"
            o = OPTION[key]
            # The keys with a shape of their own first; then every other option by its type, so an option added
            # to the table is read (and checked by the config as its CLI flag is), never silently dropped.
            if key in ("text", "target"):
                if isinstance(v, list) and v and all(isinstance(t, str) for t in v):
                    out[key] = list(v)
                else:
                    out[key] = self.text(d, key, required=True, field=f, example="The cat is happy")
            elif key == "tokens":  # [3, 1, 4], or a batch [[3, 1, 4], [5, 9]]
                ids = lambda x: isinstance(x, list) and x and all(  # noqa: E731
                    isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in x)
                if not (ids(v) or (isinstance(v, list) and v and all(ids(x) for x in v))):
                    raise self.fail(f"must be a list of token ids, got {v!r}",
                                    "write tokens = [3, 1, 4] (or a batch: tokens = [[3, 1, 4], [5, 9]])", field=f)
                out[key] = list(v)
            elif key == "embeddings":
                embeddings = self.resolve(v, path) if isinstance(v, str) else to_array(v, f, self.src, ndim=2)
            elif key in ("output_target", "grad_output"):  # the objective of a model without a loss
                out[key] = self.resolve(v, path) if isinstance(v, str) else to_array(v, f, self.src)
            elif key == "checkpoint":  # a tutorial is shared as data: a model of the catalogue, never a path
                out[key] = self.text(d, key, required=True, field=f, example="smollm2")
                if out[key] not in CATALOGUE or CATALOGUE[out[key]].in_box:
                    names = ", ".join(n for n, e in CATALOGUE.items() if not e.in_box)
                    raise self.fail(f"must name a model of 'explain models' ({names}), got {v!r}",
                                    'write checkpoint = "smollm2" (gpt-tiny is trained = true)', field=f)
            elif key == "lr":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                    raise self.fail(f"must be a positive number, got {v!r}", "write lr = 0.1", field=f)
                out[key] = float(v)
            elif o.type == "int":
                out[key] = self.count(v, f, minimum=o.min if o.min is not None else 0)
            elif o.type in ("bool", "flag"):  # switches: trained = true opens the shipped GPT
                if not isinstance(v, bool):
                    raise self.fail(f"must be true or false, got {v!r}", f"write {key} = true", field=f)
                out[key] = v
            elif o.type == "choice":
                out[key] = self.text(d, key, required=True, field=f, example=o.choices[0] if o.choices else "…")
                if o.choices and out[key] not in o.choices:
                    raise self.fail(f"must be one of {', '.join(o.choices)}, got {v!r}",
                                    f'write {key} = "{o.choices[0]}"', field=f)
            elif o.type == "float":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), -float("inf")):
                    example = o.default if o.default is not None else 1.0
                    raise self.fail(f"must be a finite number, got {v!r}", f"write {key} = {example}", field=f)
                out[key] = float(v)
            elif o.type == "text":  # a list written as text, e.g. layer_types = "sliding,full" (or a TOML list)
                if isinstance(v, list) and v and all(isinstance(t, str) for t in v):
                    v = ",".join(v)
                if not isinstance(v, str) or not v.strip():
                    raise self.fail(f"must be text, got {v!r}", f'write {key} = "…" (as its CLI flag {o.flag} takes)',
                                    field=f)
                out[key] = v
            else:  # an option kind no branch reads: refused, never ignored
                raise self.fail(f"cannot be set in a tutorial ({o.type} option)", f"remove {key}", field=f)
        return out, embeddings

    def weights(self, d: Any, path: Path | None) -> dict[str, Any]:
        if isinstance(d, str):
            return _load_npz(self.resolve(d, path), self.src)
        if not isinstance(d, dict):
            raise self.fail("weights must be a table of arrays by parameter name, or a path to an .npz file",
                            'write [weights] then "attn.W_Q" = [[…]] lines (names: explain params MODEL -o f.npz)',
                            field="weights")
        return {k: to_array(v, f'weights."{k}"', self.src) for k, v in d.items()}

    def resolve(self, rel: str, path: Path | None) -> str:
        """A file named in the tutorial, relative to the tutorial's folder."""
        return str((path.parent / rel) if path is not None and not Path(rel).is_absolute() else Path(rel))

    def stop(self, d: Any, i: int, tol: float) -> Stop:
        if not isinstance(d, dict):
            raise self.fail("each stop must be a table", "start each stop with a [[stops]] line", stop=i)
        step = d.get("step") if isinstance(d.get("step"), str) else None
        self.unknown(d, STOP_KEYS, "a stop", stop=i, step=step)
        step = self.text(d, "step", required=True, stop=i, example="attn.scores")
        kw = dict(stop=i, step=step)
        title = self.text(d, "title", required=True, example="what this stop shows", **kw)
        narration = self.text(d, "narration", required=True, example="why this step matters", **kw)
        question = self.text(d, "question", required=False, example="what shape is Q·Kᵀ?", **kw)
        answer = self.text(d, "answer", required=False, example="(T, T): one score per query and key", **kw)
        if answer and not question:
            raise self.fail("an answer without a question", 'add question = "…" (or drop the answer)', field="answer", **kw)
        cell = self.index(d["cell"], "cell", cell=True, **kw) if "cell" in d else None
        expect = self.expect(d["expect"], tol, cell, **kw) if "expect" in d else None
        line = self.src.stop_lines[i] if i < len(self.src.stop_lines) else None
        digits = self.count(d["precision"], "precision", minimum=0, **kw) if "precision" in d else None
        if digits is not None and digits > 8:
            raise self.fail(f"must be at most 8 decimals, got {digits}", "write precision = 8", field="precision", **kw)
        return Stop(step, title, narration, cell, question, answer, expect, i + 1, line, digits)

    def expect(self, d: Any, tol: float, cell: tuple | None, *, stop: int, step: str) -> Expect:
        kw = dict(stop=stop, step=step)
        if not isinstance(d, dict) or not d:
            raise self.fail("expect must be a table of expectations", "write [stops.expect] then e.g. "
                            "shape = [6, 6] or row_sums = 1.0", field="expect", **kw)
        self.unknown(d, EXPECT_KEYS, "expect", prefix="expect.", **kw)
        e = Expect(tol=self.number(d["tol"], "expect.tol", **kw) if "tol" in d else tol)
        if not 0 <= e.tol < float("inf"):
            raise self.fail(f"tol must be a finite number ≥ 0, got {e.tol}", "write tol = 5e-5", field="expect.tol", **kw)
        for key in NUMBER_EXPECTS:
            if key in d:
                setattr(e, key, self.number(d[key], f"expect.{key}", **kw))
        if e.value is not None and cell is None:
            raise self.fail("expect.value is the value of the stop's cell, but the stop has no cell",
                            "add cell = [i, j] to the stop", field="expect.value", **kw)
        if "shape" in d:
            v = d["shape"]
            if not (isinstance(v, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in v)):
                raise self.fail(f"must be a list of sizes, got {v!r}", "write shape = [6, 6] ([] for a scalar)",
                                field="expect.shape", **kw)
            e.shape = tuple(v)
        if "values" in d:
            e.values = to_array(d["values"], "expect.values", self.src, stop=stop, step=step)
        if "index" in d:
            if "values" not in d:
                raise self.fail("expect.index selects the part of the output that expect.values gives, but there "
                                "are no values", "add values = […] or drop index", field="expect.index", **kw)
            e.index = self.index(d["index"], "expect.index", **kw)
        for key in ("equal_slices", "unequal_slices"):
            if key in d:
                v = d[key]
                if not isinstance(v, list) or len(v) < 2:
                    raise self.fail(f"must list at least two slices, got {v!r}",
                                    f"write {key} = [[0], [4]] (rows 0 and 4) or [[\":\", 0], [\":\", 4]] (columns)",
                                    field=f"expect.{key}", **kw)
                setattr(e, key, [self.index(s, f"expect.{key}", **kw) for s in v])
        if "inputs" in d:
            v = d["inputs"]
            if not (isinstance(v, list) and v and all(isinstance(s, str) for s in v)):
                raise self.fail(f"must be a list of step or parameter names, got {v!r}",
                                'write inputs = ["attn.q", "attn.k"]', field="expect.inputs", **kw)
            e.inputs = tuple(v)
        if "equals" in d:
            v = [d["equals"]] if isinstance(d["equals"], str) else d["equals"]
            if not (isinstance(v, list) and v and all(isinstance(s, str) and s for s in v)):
                raise self.fail(f"must be a step name or a list of step names, got {d['equals']!r}",
                                'write equals = "blocks.1.resid_post.grad" (or a list: equal to their sum)',
                                field="expect.equals", **kw)
            e.equals = tuple(v)
        if "n_params" in d:
            e.n_params = self.count(d["n_params"], "expect.n_params", minimum=0, **kw)
        if "param_count" in d:
            v = d["param_count"]
            if not isinstance(v, dict) or not v:
                raise self.fail("must be a table of name prefix = count", 'write param_count = { "attn.W_" = 1024 }',
                                field="expect.param_count", **kw)
            e.param_count = {k: self.count(n, "expect.param_count", minimum=0, **kw) for k, n in v.items()}
        return e


def _load_npz(path: str, src: Source) -> dict[str, Any]:
    """Parameters from an .npz named by the tutorial (checked against the model when it runs), read by
    :mod:`explain.io.readers`: each member's declared size is checked before it is read."""
    from explain.io.array_files import file_kind, read_npz  # lazy: zipfile only for a tutorial that names an .npz

    fix = "give an .npz written by 'explain params MODEL -o FILE.npz', relative to the tutorial"
    try:
        p = regular_file(path, "weights file", fix)
        if file_kind(p) != "npz":
            raise ExplainError(f"weights file '{path}' is not an .npz archive; {fix}")
        return read_npz(p, "weights file", fix, limit=MAX_INPUT_BYTES)
    except ExplainError as exc:
        raise src.error(str(exc).rsplit("; ", 1)[0], fix, field="weights") from None


def parse(data: dict, name: str, path: Path | None, src: Source) -> Tutorial:
    """A Tutorial from a parsed TOML document; a TutorialError for anything missing, unknown or mistyped."""
    return _Parser(src).tutorial(data, name, path)
