"""Methods of ``nn.Module`` classes, as people write them: what ``self.c_attn`` is, read from ``__init__``.

``explain check model.py::CausalSelfAttention.forward --shape x=B,T,C --dim n_embd=768 --dim n_head=12``
reads the class's ``__init__`` (parsed, never run) before its forward: ``self.c_attn = nn.Linear(config.n_embd,
3 * config.n_embd)`` makes ``self.c_attn(x)`` a linear map from n_embd to 3·n_embd; ``self.n_head =
config.n_head`` a size; ``self.register_buffer("bias", torch.tril(…).view(1, 1, n, n))`` and ``nn.Parameter``
arrays; ``self.scale = head_dim ** -0.5`` a number. A config object's fields (``config.n_embd``,
``cfg["emb_dim"]``) and the ``__init__``'s own size arguments take their sizes from ``--dim``. Modules of
``torch.nn`` (Linear, Embedding, LayerNorm, RMSNorm, Dropout, the activations, Softmax, Sequential) are
applied with their shape rules; a class defined in the same file (a ``LayerNorm``, an ``MLP``, the attention
inside a ``Block``) is checked by checking its own forward with the arguments it is given, as is a call to
another method of the class (``self.transpose_for_scores(x)``). Whatever cannot be read is left unknown, and a
line that uses it is skipped with the reason.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from explain.check.args import claim, static_int
from explain.check.names import Ax
from explain.check.node import Node
from explain.check.supported import dotted
from explain.core.errors import ExplainError, UsageError

if TYPE_CHECKING:
    from explain.check.expr import Checker

Span = tuple[int, int]
IDENTITY = ("Dropout", "GELU", "ReLU", "SiLU", "Tanh", "Sigmoid", "Identity", "Mish", "NewGELU", "GELUActivation",
            "NewGELUActivation", "LeakyReLU", "ELU")
NORMS = ("LayerNorm", "RMSNorm")
SIZE_KEYWORDS = ("in_features", "out_features", "num_embeddings", "embedding_dim", "normalized_shape", "d_in",
                 "d_out", "dim", "num_heads", "context_length")
NOT_SIZES = ("drop", "prob", "rate", "eps", "bias", "theta", "scale", "std", "range", "init", "act")  # config fields
MAX_NESTING = 8  # a Block calling its attention calling a norm: a few levels; a recursion is refused


class Module:
    """What one ``self.X = …`` of ``__init__`` holds: a torch.nn module with its sizes, or a class of the file."""

    __slots__ = ("kind", "sizes", "parts", "cls", "call", "text", "line", "arg_texts")

    def __init__(self, kind: str, text: str, sizes: list[tuple[int, Ax]] | None = None,
                 parts: list[Module] | None = None, cls: ast.ClassDef | None = None, call: ast.Call | None = None):
        self.kind, self.text = kind, text
        self.sizes = sizes or []
        self.parts = parts or []
        self.cls, self.call = cls, call
        self.line = 0  # where __init__ made it
        self.arg_texts: list[str] = []


class ClassContext:
    """A class's ``__init__`` as read: its modules, arrays, methods, and the file it is in."""

    def __init__(self, cls: ast.ClassDef, tree: ast.Module, source: str, path: Any, depth: int = 0) -> None:
        self.cls, self.tree, self.source, self.path, self.depth = cls, tree, source, path, depth
        self.modules: dict[str, Module] = {}
        self.arrays: dict[str, Node] = {}
        self.methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.loop_modules: dict[str, Module] = {}  # for block in self.h: block is one of the list's modules


def _text(source: str, node: ast.AST) -> str:
    return " ".join((ast.get_source_segment(source, node) or "").split())


def read_init(ck: Checker, ctx: ClassContext, args: dict[str, Any] | None = None) -> None:
    """Read ``ctx.cls.__init__`` into ``ctx`` and ``ck``: sizes into ``ck.b.dims``, modules and arrays into
    ``ctx``; ``args`` binds its parameters (a size with its axis name, or "config"); without it a parameter is a
    size if --dim gives it, else a config object."""
    init = ctx.methods.get("__init__")
    if init is None:
        return
    params = [a.arg for a in init.args.posonlyargs + init.args.args + init.args.kwonlyargs][1:]
    positional = init.args.posonlyargs + init.args.args
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(init.args.defaults):], init.args.defaults))
    defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None})
    for p in params:
        given = (args or {}).get(p)
        default = defaults.get(p)
        if isinstance(given, tuple):  # (size, axis name)
            ck.b.dims[p] = ck.sizes[p] = given[0]
            if given[1] is not None and given[1] != (p,):
                ck.aliases[p] = given[1]
        elif given == "config":
            ck.configs.add(p)
        elif p in ck.b.dims and args is None:
            continue  # --dim gives it
        elif isinstance(default, ast.Constant) and isinstance(default.value, int) and not isinstance(
                default.value, bool):
            ck.b.dims[p] = ck.sizes[p] = default.value  # heads=8: the default, as a call without it gets
        elif default is None and args is None:
            ck.configs.add(p)  # config: its fields are --dim names
    for stmt in _flat(init.body):
        try:
            _init_statement(ck, ctx, stmt)
        except ExplainError as err:
            missing = missing_fields(ck, stmt)
            why = (f"it needs {' '.join(f'--dim {m}=N' for m in missing)}" if missing else str(err).split(";")[0])
            for m in missing:
                ck.missing[m] = None
            for t in ast.walk(stmt):
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" and \
                        isinstance(t.ctx, ast.Store):
                    ck.unknown[f"self.{t.attr}"] = (f"self.{t.attr} (line {stmt.lineno}: {_text(ctx.source, stmt)}) "
                                                    f"is unknown: {why}")


def missing_fields(ck: Checker, stmt: ast.stmt) -> list[str]:
    """The config fields (``config.n_embd``, ``cfg["emb_dim"]``) a statement reads that --dim does not give."""
    out: list[str] = []
    flags = {id(n) for c in ast.walk(stmt) if isinstance(c, ast.Call) for k in c.keywords
             if k.arg not in SIZE_KEYWORDS for n in ast.walk(k.value)}  # bias=config.bias: not a size
    for t in ast.walk(stmt):
        if id(t) in flags:
            continue
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in ck.configs:
            name = t.attr
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in ck.configs and \
                isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str):
            name = t.slice.value
        else:
            continue
        if name not in ck.b.dims and name not in out and name.isidentifier() and not any(
                w in name.lower() for w in NOT_SIZES):
            out.append(name)
    return out


def _flat(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``__init__``, those inside an if (either branch), a with or a try included: a module
    made under ``if not self.flash:`` is still the one the forward uses."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            out += _flat(stmt.body) + _flat(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.Try)):
            out += _flat(stmt.body)
        else:
            out.append(stmt)
    return out


def _init_statement(ck: Checker, ctx: ClassContext, stmt: ast.stmt) -> None:
    """One statement of ``__init__``: a buffer registered, a local size, or ``self.X = …`` read."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "register_buffer" and len(call.args) >= 2 \
                and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            name = call.args[0].value
            try:
                ctx.arrays[name] = _array(ck, ctx, call.args[1])
            except ExplainError as err:
                ck.unknown[f"self.{name}"] = (f"self.{name} (the buffer of line {stmt.lineno}) is unknown: "
                                              f"{str(err).split(';')[0]}")
        return
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    value = stmt.value
    if value is None or len(targets) != 1:
        return
    target = targets[0]
    if isinstance(target, ast.Name):  # a local size: inner_dim = dim_head * heads
        try:
            ck.b.dims[target.id] = ck.sizes[target.id] = static_int(ck, value, "a size")
        except ExplainError:
            return
        named = claim(ck, value)
        if named is not None and named != (target.id,):
            ck.aliases[target.id] = named
        return
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        _self_attribute(ck, ctx, stmt, target.attr, value)


def _self_attribute(ck: Checker, ctx: ClassContext, stmt: ast.stmt, name: str, value: ast.expr) -> None:
    """``self.name = value``: a module, a dict of modules, a parameter, a size, or an array."""
    ck.unknown.pop(f"self.{name}", None)
    if isinstance(value, ast.IfExp):  # self.bias = nn.Parameter(…) if bias else None: the module when there is one
        value = value.orelse if isinstance(value.body, ast.Constant) else value.body
    if isinstance(value, ast.Call) and (dotted(value.func) or "").endswith("ModuleDict") and value.args:
        _module_dict(ck, ctx, name, value.args[0])
        return
    module = _module(ck, ctx, value)
    if module is not None:
        ctx.modules[name] = module
        return
    if isinstance(value, ast.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] == "Parameter" and value.args:
        ctx.arrays[name] = _array(ck, ctx, value.args[0])
        return
    try:
        n = static_int(ck, value, "a size")
    except ExplainError:
        n = None
    if n is not None:
        named = claim(ck, value)
        ck.b.dims[name] = ck.sizes[name] = n
        from explain.check.roles import role_of_name  # lazy: a size with a role of its own keeps its name

        if named is not None and named != (name,) and role_of_name(name) is None:
            ck.aliases[name] = named
        return
    if missing_fields(ck, stmt) and isinstance(value, (ast.Attribute, ast.Subscript, ast.BinOp)):
        raise UsageError("a config field has no size")  # read_init names the --dim to give
    if isinstance(value, (ast.BinOp, ast.Call, ast.Name, ast.Subscript, ast.UnaryOp, ast.Constant)):
        try:
            ctx.arrays[name] = _array(ck, ctx, value)  # a number (self.scale = d ** -0.5) or a tensor
        except ExplainError:
            pass  # a flag, a string, an object: nothing a shape depends on


def _module_dict(ck: Checker, ctx: ClassContext, name: str, entries: ast.expr) -> None:
    """``self.transformer = nn.ModuleDict(dict(wte=…, …))`` (nanoGPT's GPT): each entry as ``transformer.wte``."""
    for key, entry in _entries(entries):
        try:
            made = _module(ck, ctx, entry)
        except ExplainError as err:
            ck.unknown[f"self.{name}.{key}"] = f"self.{name}.{key} is unknown: {str(err).split(';')[0]}"
            continue
        if made is not None:
            ctx.modules[f"{name}.{key}"] = made


def _entries(node: ast.expr) -> list[tuple[str, ast.expr]]:
    """The named entries of ``dict(wte=…, …)`` or ``{"wte": …}``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return [(k.arg, k.value) for k in node.keywords if k.arg]
    if isinstance(node, ast.Dict):
        return [(k.value, v) for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return []


def _array(ck: Checker, ctx: ClassContext, value: ast.expr) -> Node:
    src = _text(ctx.source, value)
    ck.set_source(src)
    return ck.visit(ast.parse(src, mode="eval").body)


def module_size(ck: Checker, node: ast.expr) -> tuple[int, Ax]:
    return static_int(ck, node, "a module size"), claim(ck, node)


def _module(ck: Checker, ctx: ClassContext, value: ast.expr) -> Module | None:
    """The module a ``self.X = …`` makes, or None if it makes no module."""
    if not isinstance(value, ast.Call):
        return None
    made = _made(ck, ctx, value)
    if made is not None:
        made.line = value.lineno
        made.arg_texts = [_text(ctx.source, a) for a in value.args] + [
            f"{k.arg}={_text(ctx.source, k.value)}" for k in value.keywords]
    return made


def _made(ck: Checker, ctx: ClassContext, value: ast.Call) -> Module | None:
    name = (dotted(value.func) or "").rsplit(".", 1)[-1]
    text = _text(ctx.source, value)
    kw = {k.arg: k.value for k in value.keywords if k.arg}
    if name == "Linear":
        a = value.args + [kw[k] for k in ("in_features", "out_features") if k in kw]
        if len(a) < 2:
            raise UsageError(f"{text}: nn.Linear needs in_features and out_features")
        return Module("linear", text, [module_size(ck, a[0]), module_size(ck, a[1])])
    if name == "Embedding":
        a = value.args + [kw[k] for k in ("num_embeddings", "embedding_dim") if k in kw]
        return Module("embedding", text, [module_size(ck, a[0]), module_size(ck, a[1])])
    if name in NORMS and name not in ctx.classes:
        shape = value.args[0] if value.args else kw.get("normalized_shape")
        if shape is None:
            raise UsageError(f"{text}: the norm needs its normalized_shape")
        items = shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else [shape]
        return Module("norm", text, [module_size(ck, e) for e in items])
    if name in IDENTITY and name not in ctx.classes:
        return Module("identity", text)
    if name == "Softmax":
        dim = value.args[0] if value.args else kw.get("dim")
        return Module("softmax", text, [(static_int(ck, dim, "a dim"), None)] if dim is not None else [])
    if name == "Sequential":
        parts = [_module(ck, ctx, a) for a in value.args]
        if any(p is None for p in parts):
            raise UsageError(f"{text}: a part of the Sequential is not a module the checker knows")
        return Module("sequential", text, parts=parts)  # type: ignore[arg-type]
    if name == "ModuleList" and value.args:  # [Block(config) for _ in range(n_layer)]: one kind of module
        items = value.args[0]
        inner = items.elt if isinstance(items, ast.ListComp) else items.elts[0] if isinstance(
            items, (ast.List, ast.Tuple)) and items.elts else None
        made = _module(ck, ctx, inner) if isinstance(inner, ast.Call) else None
        if made is None or isinstance(items, (ast.List, ast.Tuple)) and len({_text(ctx.source, e) for e in items.elts}) > 1:
            raise UsageError("a ModuleList of different modules is not followed")
        return Module("list", text, parts=[made])
    if name in ("ModuleList", "ModuleDict"):
        raise UsageError(f"{name} holds modules the checker cannot name")
    if name in ctx.classes:
        return Module("class", text, cls=ctx.classes[name], call=value)
    return None
