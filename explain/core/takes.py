"""Which command takes which option (issue 42, item 12): one rule, read by the click option builder (an option a
command cannot use is hidden from its --help and refused if given) and by the request's edge
(:func:`explain.engine.ask.make_request`, for ``explain.run``/``plan``/``generate`` and the interpretability tools).

An option can be of no use to a command for two reasons, both declared, never listed by name:

- the command does not do what the option sets: each :class:`~explain.core.options.Option` names in ``uses`` the
  **command capability** it needs (:data:`COMMAND_CAPABILITIES`: recording the backward pass, an optimizer step, a
  generation, its sampling, showing the steps), and each :class:`Command` says which it has;
- no model the command reads uses it: a command may need a **model capability** (``explain lens`` reads a residual
  stream that is a sum, ``pre_norm``; ``explain generate`` a model that ``generates``), and an option's ``needs`` /
  ``lacks`` then leave it no model (``--embeddings`` on the lens: no pre-norm model reads given embeddings).

Which models of a command's take an option is the registry's rule (:meth:`explain.core.options.Option.used_by`,
checked by the config: ``--experts`` on ``run gpt`` names the models that take it).
"""

from __future__ import annotations

from dataclasses import dataclass

from explain.core.errors import ConfigError, UsageError
from explain.core.options import GENERATION, OPTIONS, Option, flag
from explain.core.registry import MODELS, Model, quoted

# What a command may do with a run, as an option's ``uses`` names it.
COMMAND_CAPABILITIES: dict[str, str] = {
    "steps": "shows or writes the run's steps",
    "backward": "records the backward pass after the forward steps",
    "optimizer": "takes one optimizer step after the backward pass",
    "generation": "appends generated tokens after the forward pass",
    "sampling": "draws the generated tokens",
}


@dataclass(frozen=True)
class Command:
    """One model-taking command: what it does with a run, and the capability a model needs for it."""

    name: str
    caps: frozenset[str] | str
    models: str = ""  # the model capability the command needs ("": every model)

    def __post_init__(self) -> None:
        words = frozenset(self.caps.split() if isinstance(self.caps, str) else self.caps)
        unknown = words - set(COMMAND_CAPABILITIES)
        assert not unknown, f"command {self.name!r}: unknown capabilities {sorted(unknown)}"
        object.__setattr__(self, "caps", words)

    def reads(self, model: Model) -> bool:
        """The command runs this model."""
        return not self.models or model.can(self.models)


_RUN = "steps backward optimizer"
COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("run", _RUN),
    Command("export", _RUN),
    Command("shapes", _RUN),
    Command("params", ""),  # writes the parameters only: no steps, no backward, before any update
    Command("generate", "steps generation sampling", models="generates"),
    Command("lens", "steps", models="pre_norm"),
    Command("attribute", "steps", models="pre_norm"),
    Command("patch", "steps", models="pre_norm"),
)}

ALL: tuple[Option, ...] = OPTIONS + GENERATION  # every option a model-taking command may be given


def takes(command: str, o: Option) -> bool:
    """``command`` can use option ``o``: it does what ``o`` sets, and some model it reads uses ``o``."""
    c = COMMANDS[command]
    return (not o.uses or o.uses in c.caps) and any(o.used_by(m) for m in MODELS.values() if c.reads(m))


def refusal(command: str, o: Option) -> str:
    """The one line that refuses ``o`` on ``command``: what the option is for, and the commands (or the models)
    that use it."""
    c, head = COMMANDS[command], f"'explain {command}' takes no {o.flag}"
    if o.uses and o.uses not in c.caps:
        others = either([n for n in COMMANDS if takes(n, o)])
        return f"{head}: it is for a command that {COMMAND_CAPABILITIES[o.uses]} (explain {others}); drop {o.flag}"
    users = [m.name for m in MODELS.values() if o.used_by(m)]
    own = either([f"'{m.name}'" for m in MODELS.values() if c.reads(m)])
    return (f"{head}: only {either([f'{u!r}' for u in users])} {'uses' if len(users) == 1 else 'use'} it, and 'explain {command}' reads {own}; drop "
            f"{o.flag}, or use 'explain run {users[0]}'")


def either(words: list[str]) -> str:
    """``a, b or c``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def given(o: Option, value: object) -> bool:
    """A value the user gave (unset options are None, an unset flag False, an unset repeatable option empty)."""
    if value is None or (o.type == "flag" and value is False):
        return False
    return not (isinstance(value, (tuple, list)) and not value)  # an array is given: never compared with ==


def not_for_model(o: Option, value: object) -> str:
    """The line refusing a config option on a model that does not use it, naming the models that do."""
    names = [m.name for m in MODELS.values() if o.used_by(m)]
    given_as = flag(o.name, value) if o.type == "bool" else f"{o.flag} {value}"
    return (f"{given_as} applies to the {quoted(names)} model{'s' if len(names) > 1 else ''} only; drop it or use "
            f"'explain run {names[0]}'")


def check_model_takes(model: Model, options: dict[str, object]) -> None:
    """Refuse a config option given to a model that does not use it even at its default value (``run gpt --router
    softmax``); other values the config refuses with the same line once it holds them."""
    for o in OPTIONS:
        value = options.get(o.name)
        if o.group == "config" and given(o, value) and not o.used_by(model) and value == o.default:
            raise ConfigError(not_for_model(o, value))


def check_takes(command: str, options: dict[str, object]) -> None:
    """Refuse the first given option ``command`` cannot use (a UsageError from :func:`refusal`)."""
    for o in ALL:
        if o.name in options and given(o, options[o.name]) and not takes(command, o):
            raise UsageError(refusal(command, o))


__all__ = ["ALL", "COMMANDS", "COMMAND_CAPABILITIES", "Command", "check_model_takes", "check_takes", "either", "given",
           "not_for_model", "refusal", "takes"]
