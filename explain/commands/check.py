"""``explain check``: shape-check an expression or an einsum from the command line, without running it.

Imports only click and :mod:`explain.check` (no numpy, textual or rich), so it starts about as fast as click.
"""

from __future__ import annotations

import inspect

import click

from explain.check import render
from explain.check.errors import CheckShapeError
from explain.check.parse import parse_options
from explain.check.supported import help_text
from explain.core.errors import UsageError


class CheckCommand(click.Command):
    """A command that says what to do when the shell split an unquoted EXPR into several arguments."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The list of what is supported is generated (explain.check.supported), so the help cannot fall behind
        # it; it is built when help is shown, not at every start (bench_check_startup).
        if not getattr(self, "_supported_listed", False):
            import textwrap  # lazy: only --help wraps text; a check starts without it (bench_check_startup)

            self.help = inspect.cleandoc(self.help or "") + "\n\n\b\n" + "\n".join(textwrap.wrap(help_text(), 100))
            self._supported_listed = True
        super().format_help_text(ctx, formatter)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # click consumes the list as it parses
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            message = exc.format_message().rstrip(".")
            if "extra argument" not in message:
                raise  # the group prints click's other usage errors as one line
            # ignore_unknown_options lets a mistyped option through as an extra argument: name it as an option.
            known = {"--shape", "--dim", "--json", "--lib", "--expect", "--strict", "--help", "--"}
            unknown = [a for a in given if a.startswith("--") and a.split("=", 1)[0] not in known]
            if unknown:
                raise UsageError(f"no such option: {unknown[-1]}; the options are --shape NAME=DIMS, "
                                 "--dim NAME=SIZE, --expect SHAPE, --strict, --lib and --json") from None
            # Otherwise it is nearly always an EXPR with spaces that the shell split into words.
            raise UsageError(f"{message}; quote EXPR as one argument, like explain check \"Q @ K.T\"") from None


# ignore_unknown_options: so EXPR may start with -, as in "-x @ W".
@click.command("check", cls=CheckCommand, context_settings={"ignore_unknown_options": True})
@click.argument("expr", metavar="EXPR")
@click.option("--shape", "shapes", multiple=True, metavar="NAME=DIMS",
              help="An array's shape: sizes or --dim names separated by commas (Q=seq,d_k or Q=10,64). Repeatable.")
@click.option("--dim", "dims", multiple=True, metavar="NAME=SIZE",
              help="A named dimension's size (seq=10); also usable as a number in EXPR. Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout instead of text.")
@click.option("--lib", type=click.Choice(["auto", "numpy", "torch"]), default="auto", show_default=True,
              help="Whose rules where numpy and PyTorch differ (x.transpose(1, 2), squeeze); auto reads the "
                   "spelling (torch., F., .view, dim=); numpy refuses those spellings.")
@click.option("--expect", "expect", metavar="SHAPE",
              help="The shape the result must have, in sizes or --dim names (B,H,T,Dh or 2,12,10,64); a result that "
                   "differs is an error naming the axis and the fix. In FILE.py::function, '# expect: B, T, C' at "
                   "the end of a line does the same for that line.")
@click.option("--strict", is_flag=True,
              help="Make the warnings (a softmax over the heads, a mask after the softmax, …) errors: exit 1, for CI.")
def check(expr: str, shapes: tuple[str, ...], dims: tuple[str, ...], as_json: bool, lib: str, expect: str | None,
          strict: bool) -> None:
    """Check the shapes in EXPR without running anything.

    EXPR is an einsum over named dimensions (names separated by spaces, operands by commas, then -> and the
    output), an expression in numpy, PyTorch or einops over arrays given with --shape, or FILE.py::function
    or FILE.py::Class.method (argument shapes from jaxtyping annotations or --shape; a method's self.X from its
    class's __init__, config fields from --dim; the file is parsed, never imported). Axes given
    as names keep them through every step. Prints the output shape and how it was reached; a mismatch exits
    1 with a caret under the failing operator or name and the fix.

    \b
    Shapes that fit can still say the code is wrong: the axis names (T, seq, n_head, d_model, …; see the README's
    table) make a softmax over the heads, a normalisation over the sequence, a mask after the softmax, a scale by
    the wrong √ or a split with the heads and head width swapped a warning with the fix (--strict: an error).

    \b
    Examples:
      explain check "batch seq d_model, d_model d_head -> batch seq d_head" \\
          --dim batch=2 --dim seq=5 --dim d_model=8 --dim d_head=4
      explain check "softmax(Q @ K.T / sqrt(d_k)) @ V" --shape Q=seq,d_k --shape K=seq,d_k \\
          --shape V=seq,d_v --dim seq=10 --dim d_k=64 --dim d_v=32
      explain check "q.view(B, T, H, Dh).transpose(1, 2)" --shape q=B,T,C \\
          --dim B=2 --dim T=10 --dim C=768 --dim H=12 --dim Dh=64
      explain check 'rearrange(x, "b t (h d) -> b h t d", h=H)' --shape x=B,T,C \\
          --dim B=2 --dim T=10 --dim C=768 --dim H=12
      explain check model.py::attention --dim batch=2 --dim seq=10 --dim d_model=768
      explain check "x - x.mean(axis=-1, keepdims=True)" --shape x=4,8 --json
      explain check "q.view(B, T, H, Dh)" --shape q=B,T,C --dim B=2 --dim T=10 --dim C=768 \\
          --dim H=12 --dim Dh=64 --expect B,H,T,Dh
    """
    bindings = parse_options(shapes, dims)
    file, _, name = expr.strip().partition(":")
    if "::" not in expr and file.endswith(".py") and not any(c in file for c in " ()[]@,*+"):
        # 'model.py' or 'model.py:f' would be read as an expression (the attribute .py, a syntax error)
        example = f"{file}::{name if name.isidentifier() else 'function'}"
        raise UsageError(f"'{expr}' names a Python file: check one function in it with FILE.py::function, like "
                         f"explain check {example}")
    try:
        # Import only the checker for this form: at startup every module costs (see the benchmark).
        if "::" in expr and expr.split("::", 1)[0].endswith(".py"):
            from explain.check.function import check_function  # lazy: engine not loaded for --help

            run = check_function(expr, bindings, None if lib == "auto" else lib == "torch")
            advice = run.advice
            if expect is not None:
                run.expect(expect)
            doc = render.function_document(run) if as_json else None
            lines = None if as_json else render.render_function(run)
        elif "->" in expr and '"' not in expr and "'" not in expr:  # explain.check.einsum.is_einsum, inlined
            from explain.check.einsum import check_einsum  # lazy: engine not loaded for --help

            result = check_einsum(expr, bindings)
            advice = []
            if expect is not None:
                from explain.check.expect import parse_expect  # lazy: only --expect reads an expected shape

                want, _ = parse_expect(expect, bindings.dims)
                if tuple(result.shape) != want:
                    raise CheckShapeError(f"--expect: the result is {tuple(result.shape)}, expected {want}")
            doc = render.einsum_document(result) if as_json else None
            lines = None if as_json else render.render_einsum(result)
        else:
            from explain.check.expr import check_expression  # lazy: engine not loaded for --help

            node = check_expression(expr, bindings, None if lib == "auto" else lib == "torch")
            advice = node.info.get("advice", [])
            if expect is not None:
                from explain.check.expect import expect_node  # lazy: only --expect reads an expected shape

                expect_node(node, expect, bindings.dims, {}, looks_torch(expr, lib), expr.strip())
            doc = render.tree_document(node, bindings) if as_json else None
            lines = None if as_json else render.render_tree(node, bindings)
    except CheckShapeError as err:
        # The caret display goes to stderr just before the group prints the one-line "Error: …" there too;
        # stdout stays data only.
        for line in err.display:
            click.echo(line, err=True)
        raise
    if advice and strict:
        first = advice[0]
        for line in first.display:
            click.echo(line, err=True)
        more = f" (and {len(advice) - 1} more warning{'s' if len(advice) > 2 else ''})" if len(advice) > 1 else ""
        raise CheckShapeError(f"{first.where + ': ' if first.where else ''}{first.message} (a warning; --strict makes "
                              f"it an error){more}")
    if doc is not None:
        doc["warnings"] = [{"where": a.where or None, "message": a.message, "fix": a.fix[2] if a.fix else None}
                           for a in advice]
        import json  # lazy: only --json pays for json (bench_check_startup)

        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo("\n".join(lines or []))
    for a in advice:  # after the result, on stderr: stdout stays data
        for line in a.display:
            click.echo(line, err=True)
        click.echo(f"Warning: {a.where + ': ' if a.where else ''}{a.message}", err=True)


def looks_torch(expr: str, lib: str) -> bool:
    if lib != "auto":
        return lib == "torch"
    from explain.check.spelling import looks_like_torch  # lazy: loads only when it runs (start-up)

    return looks_like_torch(expr)

