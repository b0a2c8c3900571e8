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
            known = {"--shape", "--dim", "--json", "--lib", "--help", "--"}
            unknown = [a for a in given if a.startswith("--") and a.split("=", 1)[0] not in known]
            if unknown:
                raise UsageError(f"no such option: {unknown[-1]}; the options are --shape NAME=DIMS, "
                                 "--dim NAME=SIZE, --lib and --json") from None
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
def check(expr: str, shapes: tuple[str, ...], dims: tuple[str, ...], as_json: bool, lib: str) -> None:
    """Check the shapes in EXPR without running anything.

    EXPR is an einsum over named dimensions (names separated by spaces, operands by commas, then -> and the
    output), an expression in numpy, PyTorch or einops over arrays given with --shape, or FILE.py::function
    (argument shapes from jaxtyping annotations or --shape; the file is parsed, never imported). Axes given
    as names keep them through every step. Prints the output shape and how it was reached; a mismatch exits
    1 with a caret under the failing operator or name and the fix.

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
            doc = render.function_document(run) if as_json else None
            lines = None if as_json else render.render_function(run)
        elif "->" in expr and '"' not in expr and "'" not in expr:  # explain.check.einsum.is_einsum, inlined
            from explain.check.einsum import check_einsum  # lazy: engine not loaded for --help

            result = check_einsum(expr, bindings)
            doc = render.einsum_document(result) if as_json else None
            lines = None if as_json else render.render_einsum(result)
        else:
            from explain.check.expr import check_expression  # lazy: engine not loaded for --help

            node = check_expression(expr, bindings, None if lib == "auto" else lib == "torch")
            doc = render.tree_document(node, bindings) if as_json else None
            lines = None if as_json else render.render_tree(node, bindings)
    except CheckShapeError as err:
        # The caret display goes to stderr just before the group prints the one-line "Error: …" there too;
        # stdout stays data only.
        for line in err.display:
            click.echo(line, err=True)
        raise
    if doc is not None:
        import json  # lazy: only --json pays for json (bench_check_startup)

        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo("\n".join(lines or []))

