"""The re-run form: the model, the input text and the config, filled in from the run shown. Enter (or Run)
dismisses with the options for :func:`explain.run`; the step screen runs them and shows the engine's
error, if any, as a notification. Blank fields take the model's defaults."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from explain.errors import UsageError
from explain.limits import parse_option
from explain.models import MODELS
from explain.options import OPTIONS
from explain.trace import Trace

# (option name, label); integers, blank = the model's default
NUMBERS: list[tuple[str, str]] = [(o.name, o.form_label) for o in OPTIONS if o.type == "int"]
SHOWN = {o.name for o in OPTIONS if o.shown}  # filled in from the run; the others show it as a hint
BATCH_SEPARATOR = " | "
# Options with no field in the form; kept for the re-run. Token ids and embeddings are inputs too: typing new
# text replaces them.
# A generation's settings ("sampling") are carried too: a re-run of a generation generates again.
CARRIED = tuple(o.name for o in OPTIONS if o.name != "text" and o.type != "int") + ("sampling",)


def defaults_from(trace: Trace, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The form's starting values: the options of the run shown (when the TUI started it) or its config."""
    cfg = trace.config.to_dict()
    out: dict[str, Any] = {"model": trace.config.model}
    text = (options or {}).get("text")
    if isinstance(text, list):
        text = BATCH_SEPARATOR.join(text)
    out["text"] = text if text is not None else " ".join(trace.labels.get("pos") or [])
    for key, _ in NUMBERS:
        out[key] = cfg.get(key)
    # What the form has no field for is carried over unchanged (a re-run of a checkpoint stays on it).
    out["carry"] = {k: v for k, v in (options or {}).items() if k in CARRIED and v is not None}
    out["initial_text"] = out["text"]
    return out


class RerunScreen(ModalScreen[dict[str, Any] | None]):
    """Model, text and dimensions; Enter runs, Esc cancels."""

    BINDINGS = [Binding("escape", "dismiss(None)", "cancel"), Binding("ctrl+r", "submit", "run")]

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__()
        self.values = values

    def compose(self) -> ComposeResult:
        v = self.values
        with Vertical(id="dialog"):
            yield Static("Re-run: change the input and the config. Blank = the model's default. "
                         "For a gpt batch, separate texts with ' | '.", id="hint")
            with Grid(id="form"):
                yield Label("model")
                yield Select([(f"{m}: {d.summary}", m) for m, d in MODELS.items()], value=v["model"], allow_blank=False,
                             id="model", compact=True)
                yield Label("text")
                yield Input(v.get("text") or "", id="text", compact=True)
                for key, label in NUMBERS:
                    yield Label(label)
                    current = v.get(key)
                    shown = str(current) if key in SHOWN and current is not None else ""
                    hint = f"default (now {current})" if current is not None else "default"
                    yield Input(shown, placeholder=hint, type="integer", id=key, compact=True)
            with Horizontal(id="buttons"):
                yield Button("Run", variant="primary", id="run", compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#text", Input).focus()

    @on(Select.Changed, "#model")
    def _model_changed(self, event: Select.Changed) -> None:
        if event.value != self.values["model"]:  # another model's dimensions start from its own defaults
            for key, _ in NUMBERS:
                if key != "seed":
                    field = self.query_one(f"#{key}", Input)
                    field.value, field.placeholder = "", "default"

    def options(self) -> dict[str, Any]:
        """The form as keyword arguments of :func:`explain.run` (blank fields left out), with the options the
        form has no field for carried over while the model stays the same."""
        out: dict[str, Any] = {"model": self.query_one("#model", Select).value}
        carry = dict(self.values.get("carry") or {}) if out["model"] == self.values["model"] else {}
        text = self.query_one("#text", Input).value.strip()
        if text != (self.values.get("initial_text") or "").strip():
            carry.pop("tokens", None)
            carry.pop("embeddings", None)
        elif "tokens" in carry or "embeddings" in carry:
            text = ""  # the text field showed the labels of given ids or embeddings, not text to tokenize
        out.update(carry)
        if text:
            texts = [t.strip() for t in text.split(BATCH_SEPARATOR.strip()) if t.strip()]
            out["text"] = texts if len(texts) > 1 else texts[0]
        for key, _ in NUMBERS:
            raw = self.query_one(f"#{key}", Input).value.strip()
            if raw and raw not in ("-", "+"):
                out[key] = parse_option(key, raw)  # digits and caps checked: a 5,000-digit paste is refused
        return out

    def action_submit(self) -> None:
        try:
            options = self.options()
        except UsageError as exc:  # the form stays open with everything typed in it
            self.notify(str(exc), title="not run", severity="error", timeout=8)
            return
        self.dismiss(options)

    @on(Input.Submitted)
    def _enter(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#run")
    def _run(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
