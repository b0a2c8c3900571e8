"""StepKeys: which of the step screen's keys work on the run shown, and the Footer they make (issue 38, issue 42
item 10); and the keys whose work is the Controller's (G r e x X o / g m y A P W E), one explicit ``action_*``
each. Explicit, not forwarded by attribute lookup (issue 38): Textual, the reader and a test can see every action
the screen has, and a key without its action fails a test, not a student. Also ``f`` (a pure move of the view,
here for room: the screen's module is full) and the name of the screen's picture (``c``, the app's
:func:`explain.tui.picture.save_picture`): the step's.

A key declares what it needs (:attr:`explain.tui.keys.Key.needs`); ``check_action``, Textual's hook, says False
where the run lacks it, so the Footer and the palette leave it out, and pressing it says why
(``action_refused``)."""

from __future__ import annotations

from typing import Any

from textual.geometry import Size

from explain.render.view import View
from explain.tui import keys, needs
from explain.tui.controller import Controller
from explain.tui.state import Tour


class StepKeys:
    """The step screen's keys; the screen sets ``controller`` and the state read here."""

    controller: Controller
    view: View
    tour: Tour | None
    run_options: dict[str, Any]
    size: Size
    _composed: bool
    _footer: keys.Shown
    _have: tuple[needs.Run, frozenset[str]] | None
    _footer_facts: frozenset[str] | None
    notify: Any  # the screen's own (Textual's Screen.notify)

    def action_top(self) -> None:
        self.view, said = self.view.top()
        self.notify(said, timeout=3)

    # -- which keys work here, and the footer ---------------------------------------------------------------
    @property
    def active_bindings(self) -> dict[str, Any]:
        """Textual's, less the keys that do not fit the footer at this width (:func:`keys.in_footer`)."""
        self._footer, self._footer_facts = self._footer_fit(), self._facts()[1]
        return keys.in_footer(super().active_bindings, self._footer)

    def _footer_fit(self) -> keys.Shown:
        return keys.footer_actions(self.size.width or 80, self.works)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A key works where the run has what it needs (:attr:`keys.Key.needs`): else Textual neither shows nor
        runs it, and its hidden twin ``refused(i)`` (:func:`keys.bindings`) runs instead to say why. The palette
        asks the app's keys here too (``app.model_map``)."""
        if action == "refused":
            return not self.works(keys.KEYS[int(parameters[0])].name)  # type: ignore[call-overload]
        return self.works(action.removeprefix("app."))

    def works(self, name: str) -> bool:
        """Whether the action ``name`` can work on the run shown (the facts are the run's, not the step's: the
        footer changes when the run does, never per step)."""
        return keys.works(name, self._facts()[1])

    def _facts(self) -> tuple[needs.Run, frozenset[str]]:
        """The run shown and the words of :data:`needs.NEEDS` it has, worked out once per run."""
        run, have = needs.Run(self.view.trace, self.tour is not None, self.run_options), self._have
        if have is None or have[0].trace is not run.trace or have[0].tutorial != run.tutorial \
                or have[0].options is not run.options:
            self._have = have = (run, needs.facts(run))
        return have

    def action_refused(self, index: int) -> None:
        """A key pressed where the run lacks what it needs: why, in one line."""
        key = keys.KEYS[index]
        run, have = self._facts()
        self.notify(f"{key.display or key.shown_keys}: {needs.why_not(key.needs, run, have)}", timeout=5)

    def _refresh_keys(self) -> None:
        """The run changed: if what it has changed since the footer was built, the footer follows (a recompose:
        a frame)."""
        if self._composed and self._facts()[1] != self._footer_facts:
            self.refresh_bindings()


    def action_generate(self) -> None:
        self.controller.generate()

    def action_gradient(self) -> None:
        self.controller.gradient()

    def action_rerun(self) -> None:
        self.controller.rerun()

    def action_export_step(self) -> None:
        self.controller.export_step()

    def action_export_run(self) -> None:
        self.controller.export_run()

    def action_tokenizer(self) -> None:
        self.controller.tokenizer()

    def action_search(self) -> None:
        self.controller.search()

    def action_goto(self) -> None:
        self.controller.goto()

    def action_heads(self) -> None:
        self.controller.heads()

    def action_lens(self) -> None:
        self.controller.lens()

    def action_attribution(self) -> None:
        self.controller.attribution()

    def action_patching(self) -> None:
        self.controller.patching()

    def action_generated(self) -> None:
        self.controller.generated()

    def action_experts(self) -> None:
        self.controller.experts()

    def picture_name(self) -> str:
        """The step's name (``blocks_0_attn_scores.svg``), as the step view's pictures were always named."""
        return self.controller.host.view.step.name
