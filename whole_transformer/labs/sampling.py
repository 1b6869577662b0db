"""The sampling lab (notebook 03): how a model can choose its next word other than by the highest score.

``sampling_lab()`` shows the trained model reading the number typed in the box, at one step of its answer
(the prompt and the right words before that step go in). For the last row's 42 scores it lists every token with
its probability after each setting in turn: the plain softmax, then divided by the *temperature*, then
*top-k* (keep the k most likely, 0: off), then *top-p* (keep the fewest most likely whose probabilities reach p,
the one that crosses p included; 1: off), each renormalised. Kept rows say "kept"; dropped rows say why, and are
hatched and greyed too. *Read it 20 times* samples 20 whole readings with these settings, all from the
generator seeded by *seed* (the same seed and settings give the same 20 readings), and says how many are
right and which wrong readings came most often. A live line says what the lab shows after every change.

Attributes tests and notebooks use: ``number`` (Text), ``checkpoint`` (Dropdown, the labs' one chooser,
``_decode.CHECKPOINTS``), ``step``, ``top_k`` (IntSlider), ``temperature``, ``top_p`` (FloatSlider), ``seed``
(BoundedIntText), ``read_button`` (Button), ``table``, ``readings``, ``status`` (HTML); read-only ``stages``
(``_sampling.Stages`` of the step shown, or None after bad input), ``settings``, ``right`` (right readings of
the last 20, or None), ``message``. Methods: ``read_many()``.

CSS classes: root ``wt-lab wt-sampling``; ``wt-sampling-number``, ``wt-sampling-checkpoint``,
``wt-sampling-step``, ``wt-sampling-temperature``, ``wt-sampling-topk``, ``wt-sampling-topp``,
``wt-sampling-seed``, ``wt-sampling-read`` the controls; ``wt-sampling-status`` the line above the table
(``wt-sampling-error`` in it after bad input); ``wt-sampling-table`` the table, each row ``wt-sampling-row``
plus ``wt-kept`` or ``wt-dropped``, with ``data-token`` and ``data-p``; ``wt-sampling-readings`` the 20
readings (``data-right``); ``wt-sampling-live`` the summary line.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..task import VOCAB, expected_answer, prompt, sequence
from . import _sampling as sp
from ._decode import CHECKPOINTS, chooser_layout, model_for, model_options, model_phrase, parse_number, resolve
from ._html import esc
from ._widgets import LIVE, LabBox

TIMES = 20  # readings per press of the button
_CLASSES = {
    "number": "wt-sampling-number",
    "checkpoint": "wt-sampling-checkpoint",
    "step": "wt-sampling-step",
    "temperature": "wt-sampling-temperature",
    "top_k": "wt-sampling-topk",
    "top_p": "wt-sampling-topp",
    "seed": "wt-sampling-seed",
    "read_button": "wt-sampling-read",
    "status": "wt-sampling-status",
    "table": "wt-sampling-table-box",
    "readings": "wt-sampling-readings-box",
}


class SamplingLab(LabBox):
    """One step's scores under temperature, top-k and top-p, and 20 sampled readings of the number."""

    def __init__(
        self,
        number: int | str = 742,
        step: int = 3,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        checkpoint: str = "60",
        seed: int = 0,
    ) -> None:
        if str(checkpoint) not in CHECKPOINTS:
            raise ValueError(f"checkpoint must be one of {sorted(CHECKPOINTS)}, got {checkpoint!r}")
        self._stages: sp.Stages | None = None
        self._right: int | None = None
        self._n: int | None = None
        self._message = ""
        wide = {"description_width": "90px"}
        self.number = widgets.Text(value=str(number), description="number", continuous_update=False)
        models = model_options()
        self.checkpoint = widgets.Dropdown(
            options=models, value=resolve(checkpoint), description="model", **chooser_layout(models, 90)
        )
        self.step = widgets.IntSlider(value=step, min=1, max=8, description="step", style=wide)
        self.temperature = widgets.FloatSlider(
            value=temperature, min=0.05, max=4.0, step=0.05, description="temperature", style=wide
        )
        self.top_k = widgets.IntSlider(value=top_k, min=0, max=len(VOCAB), description="top-k (0: off)", style=wide)
        self.top_p = widgets.FloatSlider(
            value=top_p, min=0.05, max=1.0, step=0.05, description="top-p (1: off)", style=wide
        )
        self.seed = widgets.BoundedIntText(value=seed, min=0, max=10**6, description="seed", layout={"width": "160px"})
        self.read_button = widgets.Button(
            description=f"Read it {TIMES} times", button_style="primary", tooltip="sample whole readings of the number"
        )
        self.status, self.table, self.readings = widgets.HTML(), widgets.HTML(), widgets.HTML()
        for attr, cls in _CLASSES.items():
            getattr(self, attr).add_class(cls)
        top = widgets.HBox([self.number, self.checkpoint, self.step], layout={"flex_flow": "row wrap"})
        knobs = widgets.HBox([self.temperature, self.top_k, self.top_p], layout={"flex_flow": "row wrap"})
        read = widgets.HBox([self.read_button, self.seed], layout={"flex_flow": "row wrap"})
        super().__init__([top, knobs, self.status, LIVE, self.table, read, self.readings], "sampling")
        for w in (self.number, self.checkpoint, self.step):
            w.observe(lambda _: self._recompute(), names="value")
        for w in (self.temperature, self.top_k, self.top_p):
            w.observe(lambda _: self._render(), names="value")
        self.seed.observe(lambda _: self._new_seed(), names="value")
        self.read_button.on_click(lambda _: self.read_many())
        self._recompute()

    # ---- state
    @property
    def settings(self) -> sp.Settings:
        return sp.Settings(float(self.temperature.value), int(self.top_k.value), float(self.top_p.value))

    @property
    def stages(self) -> sp.Stages | None:
        return self._stages

    @property
    def right(self) -> int | None:
        return self._right

    @property
    def message(self) -> str:
        return self._message

    # ---- what changes do
    def _recompute(self) -> None:
        """A new number, model or step: the step's scores afresh."""
        try:
            n = parse_number(self.number.value)
        except ValueError as e:
            self._n, self._stages, self._message = None, None, str(e)
            self.status.value = f'<div class="wt-sampling-error" style="color: rgb(178,24,43);">✗ {esc(e)}.</div>'
            self.table.value = self.readings.value = ""
            self.say(f"Cannot read that: {e}.")
            return
        words = len(expected_answer(n).split()) + 1  # the answer's tokens, <eos> too
        if n != self._n:
            self.step.max = max(words, 1)
        self._n = n
        self._scores = sp.step_scores(model_for(self.checkpoint.value), n, min(self.step.value, words))
        self._forget_readings()
        self._render()

    def _new_seed(self) -> None:
        self._forget_readings()
        self.say(f"Seed {self.seed.value}: press Read it {TIMES} times for twenty readings from this seed.")

    def _forget_readings(self) -> None:
        self._right = None
        self.readings.value = ""

    def _render(self) -> None:
        """New settings: every token's probabilities, the table and the live line."""
        if self._n is None:
            return
        n, k = self._n, self.step.value
        s = self.settings
        st = self._stages = sp.stages(self._scores, s)
        answer = expected_answer(n).split() + ["<eos>"]
        before = " ".join(answer[: k - 1])
        right = answer[k - 1]
        top = max(range(len(VOCAB)), key=lambda i: st.final[i])
        self._message = (
            f"Step {k} of reading {n} ({model_phrase(self.checkpoint.value)}), after '{before or '='}': "
            f"{s.text()}. {st.kept} of {len(VOCAB)} tokens kept; "
            f"'{right}' (the right word) has probability {st.final[VOCAB.index(right)]:.3f}, "
            f"'{VOCAB[top]}' the most ({st.final[top]:.3f})."
        )
        self.status.value = (
            f'<div style="padding: 4px 0;">Reading <b>{n}</b>: the model has read '
            f"<b>{esc(' '.join(VOCAB[i] for i in sequence(n)[: len(prompt(n)) + k - 1]))}</b> and chooses "
            f"word {k}.</div>"
        )
        self.table.value = sp.table_html(st, s, right)
        self._forget_readings()
        self.say(self._message)

    def read_many(self) -> int | None:
        """Sample 20 readings with the settings and the seed; show how many are right and the common wrong ones."""
        if self._n is None:
            return None
        n, s, seed = self._n, self.settings, int(self.seed.value)
        readings = sp.read_many(model_for(self.checkpoint.value), n, s, TIMES, seed)
        self._right, wrong = sp.tally(n, readings)
        self.readings.value = sp.readings_html(n, self._right, wrong, TIMES, s, seed)
        times = f"{wrong[0][1]} time{'s' if wrong[0][1] != 1 else ''}" if wrong else ""
        common = f" The most common wrong one: '{wrong[0][0]}' ({times})." if wrong else ""
        self.say(f"{self._right} of {TIMES} readings of {n} are right with {s.text()}, seed {seed}.{common}")
        return self._right


def sampling_lab(number: int | str = 742, step: int = 3, **settings) -> SamplingLab:
    """The sampling lab: one step's probabilities under temperature, top-k and top-p, and 20 sampled readings.
    ``settings`` are ``SamplingLab``'s: temperature, top_k, top_p, checkpoint and seed."""
    return SamplingLab(number, step, **settings)
