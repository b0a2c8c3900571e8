"""The walk over one function's body for ``explain check FILE.py::function``, statement by statement.

The file is parsed with :mod:`ast` and never imported or run (nor is torch or jaxtyping). Argument shapes
come from jaxtyping-style annotations, ``Float[Tensor, "batch seq d_model"]`` (names, ``*batch``, ``...``,
literal sizes), or ``--shape``; ``--dim`` gives the names' sizes. Each statement of the body is checked in
order and the names it assigns carry their shapes and axis names forward; ``B, T, C = x.shape`` binds sizes
that stand for x's axes. A statement the checker cannot follow (a loop, a call to an unknown function) is
skipped with one note, and the names it assigns become unknown: a later use says so. The first shape
mismatch stops the check with the file, the line, a caret and the fix.
"""

from __future__ import annotations

import ast
from pathlib import Path

from explain.check.args import claim, static_int
from explain.check.errors import Advice, CheckShapeError
from explain.check.expr import Checker, review
from explain.check.node import Node
from explain.check.parse import Bindings
from explain.check.shaping import split
from explain.check.source import Row, bind_arguments, tag
from explain.core.errors import ExplainError, UsageError

FLOW = {ast.For: "a for loop", ast.While: "a while loop", ast.If: "an if", ast.With: "a with block",
        ast.Try: "a try block", ast.AsyncFor: "a for loop", ast.FunctionDef: "a nested function",
        ast.ClassDef: "a class", ast.Match: "a match"}


def _targets(stmt: ast.stmt) -> list[str]:
    return [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def utf8_lines(source: str) -> list[bytes]:
    """The lines as ast counts them (\\n, \\r\\n, \\r only), in UTF-8, since its column offsets are bytes. Split
    once per function: ``ast.get_source_segment`` splits the whole source on every call, quadratic over a long
    function (issue 36)."""
    return [ln.encode() for ln in source.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


class FunctionCheck:
    """The walk over one function's body; ``rows`` is the report, ``result`` the returned node (if reached)."""

    def __init__(self, source: str, path: Path, fn: ast.FunctionDef, bindings: Bindings, torch: bool | None,
                 given: dict[str, Node] | None = None) -> None:
        self.path, self.fn, self.lines = path, fn, source.splitlines()
        self._utf8 = utf8_lines(source)
        self.line = fn.lineno  # the statement being checked (errors name it)
        self.depth = 0  # how deep in calls of modules and methods (explain.check.classes)
        self.label = fn.name  # Class.method for a method
        self.tuples: dict[str, list[Node]] = {}  # names holding several arrays (qkv = x.chunk(3, dim=-1))
        self.ck = Checker("", bindings, True if torch is None and "torch" in source else torch)
        self.rows: list[Row] = []
        self.result: Node | None = None
        self.advice: list[Advice] = []  # warnings, each with the file and line it is about
        self.source = source
        self.expects: dict[int, str] = {}
        if "expect:" in source:
            from explain.check.expect import expect_comments  # lazy: only a file with '# expect:' comments

            self.expects = expect_comments(source)
        args = {n: Node(n, "input", shape, names=names) for n, (shape, names) in bind_arguments(fn, bindings).items()} \
            if given is None else given
        for name, node in args.items():
            self.ck.env[name] = node
            self.rows.append(Row(fn.lineno, name, node, "argument"))
        for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if a.arg not in self.ck.env and a.arg not in bindings.dims and a.arg != "self":
                self.ck.unknown[a.arg] = (f"argument {a.arg} has no shape: give it a jaxtyping annotation or "
                                          f"--shape {a.arg}=DIMS (or --dim {a.arg}=N for a size)")

    def skip(self, stmt: ast.stmt, why: str, root: str | None = None) -> None:
        names = [n for n in dict.fromkeys(_targets(stmt)) if n not in self.ck.b.dims]
        for n in names:
            self.ck.env.pop(n, None)
            self.ck.unknown[n] = root or f"line {stmt.lineno} was skipped ({why})"
        tail = f"; now unknown: {', '.join(names)}" if names else ""
        self.rows.append(Row(stmt.lineno, self.snippet(stmt), note=f"skipped: {why}{tail}"))

    def snippet(self, node: ast.AST) -> str:
        """The source of ``node``, its white space folded (what ast.get_source_segment gives, in linear time)."""
        end = getattr(node, "end_lineno", None)
        if end is None or getattr(node, "end_col_offset", None) is None:
            return ""
        first, last = node.lineno - 1, end - 1
        part = self._utf8[first:last + 1]
        if not part:
            return ""
        if first == last:
            seg = part[0][node.col_offset:node.end_col_offset]
        else:
            seg = b"\n".join([part[0][node.col_offset:], *part[1:-1], part[-1][:node.end_col_offset]])
        return " ".join(seg.decode(errors="replace").split())

    def expr(self, node: ast.expr) -> Node:
        self.ck.set_source(self.snippet(node))
        shifted = ast.parse(self.ck.src, mode="eval").body
        return self.ck.visit(shifted)

    def statement(self, stmt: ast.stmt) -> None:
        """Check one statement of the body: followed (if/with/for), skipped with why, or its value checked."""
        self.line = self.ck.line = stmt.lineno
        if isinstance(stmt, (ast.If, ast.With, ast.Try, ast.For)):
            from explain.check.flow import follow  # lazy: only a function with an if or a with block

            return follow(self, stmt, run_body)
        if type(stmt) in FLOW or isinstance(stmt, ast.AsyncFunctionDef):
            return self.skip(stmt, f"{FLOW.get(type(stmt), 'a nested function')} is not followed")
        if isinstance(stmt, (ast.Pass, ast.Assert, ast.Import, ast.ImportFrom)) or (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            return None  # docstrings, asserts and imports change no shape
        value = getattr(stmt, "value", None)
        if value is None or not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr)):
            return self.skip(stmt, f"{type(stmt).__name__.lower()} statements are not followed")
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if self.held(stmt, targets, value):
            return None
        return self.assigned(stmt, targets, value)

    def held(self, stmt: ast.stmt, targets: list[ast.expr | None], value: ast.expr) -> bool:
        """A value that is not one array (a shape, a size, a tuple of arrays), kept by :mod:`values`; False
        if ``value`` is an array expression, for :meth:`assigned`."""
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(stmt, ast.Assign) and (
                isinstance(value, (ast.Tuple, ast.BinOp, ast.Subscript)) or isinstance(value, ast.Call) and isinstance(
                value.func, ast.Attribute) and value.func.attr in ("chunk", "split", "size")):
            from explain.check import values  # lazy: only shapes and tuples held by a name

            if values.assign(self, stmt, targets[0].id, value):
                return True
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and self.size(stmt, targets[0].id, value):
            return True
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple) and (isinstance(value, ast.Name) and value.id in
                                                                         self.tuples or isinstance(value, ast.Call) and
                                                                         isinstance(value.func, ast.Name) and
                                                                         value.func.id == "map"):
            from explain.check import values  # lazy: only tuples of arrays

            if values.unpack(self, stmt, targets[0], value):
                return True
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple) and self.unpack(stmt, targets[0], value):
            return True
        if isinstance(stmt, ast.Return) and isinstance(value, ast.Tuple) and value.elts:
            from explain.check.values import return_tuple  # lazy: only a function returning a tuple

            return_tuple(self, stmt, value)
            return True
        return False

    def assigned(self, stmt: ast.stmt, targets: list[ast.expr | None], value: ast.expr) -> None:
        """An array expression checked, its warnings and ``# expect:`` settled, and its value bound to its
        names (or returned); a statement the checker cannot follow is skipped with why."""
        try:
            node = self.expr(value) if not isinstance(stmt, ast.AugAssign) else self.aug(stmt)
        except CheckShapeError:
            raise
        except ExplainError as err:
            return self.skip(stmt, str(err).split(";")[0], getattr(err, "root", None))
        self.settle(stmt, node)
        if isinstance(stmt, ast.Return):
            self.result = node
            self.rows.append(Row(stmt.lineno, "return " + self.snippet(value), node))
            return None
        for t in targets:
            if isinstance(t, ast.Name):
                if node.op == "size":
                    self.ck.b.dims[t.id] = self.ck.sizes[t.id] = int(node.detail.split("= ")[-1])
                else:
                    self.ck.env[t.id] = node
                self.ck.unknown.pop(t.id, None)
            elif t is not None:
                return self.skip(stmt, f"assigning to {self.snippet(t)} is not followed")
        self.rows.append(Row(stmt.lineno, self.snippet(stmt), node))
        return None

    def settle(self, stmt: ast.stmt, node: Node) -> None:
        """After a statement: its nodes remember their line, the whole-tree checks run, its warnings are kept
        with their line, and a ``# expect:`` comment on its lines is held against its value."""
        tag(node, stmt.lineno, self.ck.src)
        review(self.ck, node)
        for a in self.ck.advice[len(self.advice):]:
            if a.where:  # from a module or method this line called: already placed
                self.advice.append(a)
                continue
            line = a.line or stmt.lineno
            a.where = f"{self.path}:{line}"
            if a.fix is not None:  # a fix in this statement: as an edit of its line of the file
                a.edits.append((stmt.lineno, self.ck.src[a.fix[0]:a.fix[1]], a.fix[2]))
            a.edits = [(stmt.lineno if at == -1 else at, old, new) for at, old, new in a.edits]
            self.advice.append(a)
        for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
            if line in self.expects:
                from explain.check.expect import expect_node  # lazy: only a file with '# expect:' comments

                # run_body prefixes FILE:LINE (the statement's): a line here only if the comment's is later
                label = f"# expect: {self.expects[line]}".rstrip()
                try:
                    expect_node(node, self.expects[line], self.ck.b.dims, self.ck.aliases, self.ck.torch, self.ck.src,
                                where=label if line == stmt.lineno else f"line {line}: {label}")
                except CheckShapeError:
                    raise
                except UsageError as err:  # an unreadable comment: named by file and line like a mismatch
                    raise UsageError(f"{self.path}:{line}: {err}") from None

    def expect(self, raw: str) -> None:
        """``--expect`` for a function: its returned value."""
        from explain.check.expect import expect_node  # lazy: only --expect reads an expected shape

        if self.result is None:
            raise UsageError(f"--expect: {self.fn.name}() returns no checked value to compare")
        expect_node(self.result, raw, self.ck.b.dims, self.ck.aliases, self.ck.torch, self.result.info.get(
            "src", self.result.text))

    def size(self, stmt: ast.stmt, name: str, value: ast.expr) -> bool:
        """``hd = C // n_head`` or ``H = self.n_head``: a size known from the text, which then names what it
        sizes (its claim) wherever it is used. False if the value is not a size (an array, say)."""
        if isinstance(value, ast.Constant) and not isinstance(value.value, int):
            return False
        self.ck.set_source(self.snippet(value))
        tree = ast.parse(self.ck.src, mode="eval").body
        try:
            n = static_int(self.ck, tree, "a size")
            named = claim(self.ck, tree)
        except ExplainError:
            return False
        self.ck.b.dims[name] = self.ck.sizes[name] = n
        if named is not None and named != (name,):
            self.ck.aliases[name] = named
        self.ck.env.pop(name, None)
        self.ck.unknown.pop(name, None)
        self.rows.append(Row(stmt.lineno, self.snippet(stmt), note=f"size {n}"))
        return True

    def aug(self, stmt: ast.AugAssign) -> Node:
        self.ck.set_source(self.snippet(stmt))
        tree = ast.parse(self.ck.src).body[0]
        assert isinstance(tree, ast.AugAssign)
        left = self.ck.visit(ast.Name(id=tree.target.id, ctx=ast.Load(), col_offset=tree.target.col_offset,  # type: ignore[attr-defined]
                                      end_col_offset=tree.target.end_col_offset))
        right = self.ck.visit(tree.value)
        return self.ck.combine(tree, "matmul" if isinstance(tree.op, ast.MatMult) else "add", left, right,
                               (left.end, right.start))

    def unpack(self, stmt: ast.stmt, target: ast.Tuple, value: ast.expr) -> bool:
        """``B, T, C = x.shape`` (or ``x.size()``): sizes that stand for x's axes. False if it is not that."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in (
                "split", "chunk") and all(isinstance(e, ast.Name) for e in target.elts):
            try:
                parts = self.pieces(value, len(target.elts))
            except CheckShapeError:
                raise
            except ExplainError as err:
                self.skip(stmt, str(err).split(";")[0], getattr(err, "root", None))
                return True
            for e, part in zip(target.elts, parts):
                self.ck.env[e.id] = part  # type: ignore[attr-defined]
                self.ck.unknown.pop(e.id, None)  # type: ignore[attr-defined]
            self.rows.append(Row(stmt.lineno, self.snippet(stmt), parts[0], note=f"each of {len(parts)}"))
            return True
        base = None
        if isinstance(value, ast.Attribute) and value.attr == "shape":
            base = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
                and not value.args:
            base = value.func.value
        if base is None or not all(isinstance(e, ast.Name) for e in target.elts):
            return False
        try:
            arr = self.expr(base)
        except ExplainError as err:
            self.skip(stmt, str(err).split(";")[0])
            return True
        if len(arr.shape) != len(target.elts):
            raise CheckShapeError(f"{self.where(stmt)}: unpacking {len(target.elts)} names from a {len(arr.shape)}-D "
                                  f"shape {arr.shape}", [])
        for e, size, ax in zip(target.elts, arr.shape, arr.names):
            name = e.id  # type: ignore[attr-defined]
            self.ck.b.dims[name] = self.ck.sizes[name] = size
            if ax is not None:
                self.ck.aliases[name] = ax
            self.ck.unknown.pop(name, None)
        self.rows.append(Row(stmt.lineno, self.snippet(stmt), arr, note="sizes"))
        return True

    def pieces(self, call: ast.Call, want: int) -> list[Node]:
        """``t.split(C, dim=2)`` / ``t.chunk(3, dim=-1)`` into ``want`` named pieces."""
        self.ck.set_source(self.snippet(call))
        tree = ast.parse(self.ck.src, mode="eval").body
        assert isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute)
        return split(self.ck, tree, want)

    def where(self, stmt: ast.AST) -> str:
        return f"{self.path}:{stmt.lineno}"


def run_body(run: FunctionCheck, body: list[ast.stmt] | None = None) -> None:
    """Check the statements of ``body`` (the function's) in order, until one returns; a mismatch is raised with
    the file and line it is on."""
    try:
        for stmt in run.fn.body if body is None else body:
            if run.result is not None:
                break
            run.statement(stmt)
    except CheckShapeError as err:
        if not getattr(err, "located", False):
            err.display = [f"  {run.path}:{run.line}:"] + err.display
            err.args = (f"{run.path}:{run.line}: {err}",)
            err.report = run.rows  # type: ignore[attr-defined]
            err.located = True  # type: ignore[attr-defined]
            if err.fix is not None and not err.edits:  # the fix as an edit of this line of the file
                err.edits = [(run.line, run.ck.src[err.fix[0]:err.fix[1]], err.fix[2])]
        raise
