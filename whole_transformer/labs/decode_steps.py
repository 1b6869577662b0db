"""The decode lab (notebook 03): one run of the model per step, a trained model writes a number out in words.

``decode_lab()`` shows the shipped model (after 2 or after 60 epochs of training) reading the
number typed in the box. Each press of *Next step* runs one step of greedy decoding: the rows
that go in, the token picked and appended, the five highest scores of the last row as bars,
and, above the input tokens, bars for where the last row's attention looked (the last block
with its heads averaged, unless another block or head is chosen). *Reset* goes back to the
prompt; *▶ Play* steps on its own (it turns into *❚❚ Pause*) and *■ Stop* stops where it is.
Every control has a visible name, and a live line says what the last step did. When the model
has written ``<eos>`` (or 6 new tokens) the lab
says whether the answer is right.

The whole reading is computed once when the number or the model changes (a few milliseconds);
a step only redraws light HTML, so it responds in about a millisecond.

Attributes tests and notebooks use: ``number`` (Text), ``checkpoint`` (Dropdown, values "60"
and "2", and "yours:<name>" for each run kept in notebook 04), ``next_button``,
``reset_button``, ``play_button``, ``stop_button`` (Buttons), ``play`` (a hidden Play widget, the
timer: its value is the step shown), ``block`` (Dropdown of block numbers 1…N), ``head``
(Dropdown: "mean" or 1…h), ``status``, ``view``, ``live``, ``yours`` (HTML: which kept runs
there are, or how to keep one), and the read-only ``trace`` (the ``decode.Trace``, or None after
bad input), ``step`` (0 … len(trace.steps)), ``done``, ``right``, ``message``. Methods:
``next_step()``, ``reset()``, ``run_to_end()``.

CSS classes: root ``wt-lab wt-decode``; ``wt-decode-controls``; ``wt-decode-next``,
``wt-decode-reset``, ``wt-decode-play`` (the hidden timer), ``wt-decode-playpause``,
``wt-decode-stop``, ``wt-decode-number``, ``wt-decode-checkpoint``,
``wt-decode-block``, ``wt-decode-head`` (the controls); ``wt-decode-status`` the line above the
picture (``wt-decode-right`` / ``wt-decode-wrong`` inside it when the reading has ended,
``wt-decode-error`` after bad input); ``wt-decode-view`` the picture; inside it
``wt-decode-rows`` the input tokens, each a ``wt-decode-token`` with ``data-weight`` and an
attention bar ``wt-decode-att``; ``wt-decode-picked`` the appended token; ``wt-decode-top`` the
bar chart of the top scores, each bar ``wt-decode-score`` with ``data-token`` and ``data-score``.

``held_out_table`` (notebook 03's table of the held-out numbers) lives in ``heldout.py``.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..decode import MAX_NEW, Trace, greedy_trace
from ..task import VOCAB, expected_answer, parse_prompt
from . import _yours
from ._decode import (
    check_args,
    chooser_layout,
    model_for,
    model_options,
    model_phrase,
    parse_number,
    prompt_message,
    rows_html,
    step_status,
    top_scores_html,
    written_text,
)
from ._html import esc
from ._widgets import LIVE, LabBox

PLAY, PAUSE = "▶ Play", "❚❚ Pause"


class DecodeLab(LabBox):
    """Greedy decoding of one number, step by step, with the last row's attention and top scores."""

    def __init__(
        self,
        number: int | str = 896,
        checkpoint: str = "60",
        block: int | None = None,
        head: str | int = "mean",
        interval_ms: int = 900,
        finished: bool = False,
    ):
        checkpoint, block, n_layers, n_heads = check_args(checkpoint, block, head)
        self._trace: Trace | None = None
        self._n: int | None = None
        self._message = ""
        self._make_controls(number, checkpoint, interval_ms)
        self._make_choosers(block, head, n_layers, n_heads)
        self.status = widgets.HTML()
        self.view = widgets.HTML()
        for w, cls in [
            (self.number, "wt-decode-number"),
            (self.checkpoint, "wt-decode-checkpoint"),
            (self.next_button, "wt-decode-next"),
            (self.reset_button, "wt-decode-reset"),
            (self.play, "wt-decode-play"),
            (self.play_button, "wt-decode-playpause"),
            (self.stop_button, "wt-decode-stop"),
            (self.block, "wt-decode-block"),
            (self.head, "wt-decode-head"),
            (self.status, "wt-decode-status"),
            (self.view, "wt-decode-view"),
        ]:
            w.add_class(cls)
        controls = widgets.HBox(
            [
                self.number,
                self.checkpoint,
                self.next_button,
                self.reset_button,
                self.play_button,
                self.stop_button,
                self.play,
            ],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        controls.add_class("wt-decode-controls")
        choose = widgets.HBox([self.block, self.head])
        self.yours = widgets.HTML(f'<div class="wt-yours-note">{esc(_yours.note())}</div>')  # or how to get one
        super().__init__([controls, choose, self.yours, self.status, self.view, LIVE], "decode")
        self._connect()
        self._recompute()
        if finished:  # open on the whole reading (Reset goes back to the prompt)
            self.run_to_end()

    def _make_controls(self, number: int | str, checkpoint: str, interval_ms: int) -> None:
        """The number box, the model, Next step, Reset, ▶ Play and ■ Stop, and the hidden timer."""
        self.number = widgets.Text(
            value=str(number), description="number", continuous_update=False, layout=widgets.Layout(width="170px")
        )
        models = model_options()
        self.checkpoint = widgets.Dropdown(
            options=models, value=checkpoint, description="model", **chooser_layout(models)
        )  # every label in full
        self.next_button = widgets.Button(description="Next step", button_style="primary", icon="step-forward")
        self.reset_button = widgets.Button(description="Reset", icon="undo")
        # ipywidgets' own Play draws ▶ and ■ as unnamed icons, and its ■ goes back to the start; it stays as the
        # timer (hidden), driven by two named buttons
        self.play = widgets.Play(
            value=0,
            min=0,
            max=1,
            step=1,
            interval=interval_ms,
            show_repeat=False,
            layout=widgets.Layout(display="none"),
        )
        self.play_button = widgets.Button(
            description=PLAY, tooltip="play the steps one by one", layout=widgets.Layout(width="120px")
        )
        self.stop_button = widgets.Button(
            description="■ Stop", tooltip="stop where it is (Reset goes back)", layout=widgets.Layout(width="110px")
        )

    def _make_choosers(self, block: int, head: str | int, n_layers: int, n_heads: int) -> None:
        """Which block's attention, and which head (or the heads averaged), the bars show."""
        self.block = widgets.Dropdown(
            options=[(f"block {b}", b) for b in range(1, n_layers + 1)],
            value=block,
            description="attention",
            layout=widgets.Layout(width="200px"),
        )
        self.head = widgets.Dropdown(
            options=[("heads averaged", "mean")] + [(f"head {h}", h) for h in range(1, n_heads + 1)],
            value=head,
            description="heads",
            style={"description_width": "50px"},
            layout=widgets.Layout(width="210px"),
        )

    def _connect(self) -> None:
        """What each control does."""
        self.next_button.on_click(lambda _: self.next_step())
        self.reset_button.on_click(lambda _: self.reset())
        self.play_button.on_click(lambda _: self.toggle_play())
        self.stop_button.on_click(lambda _: self.stop())
        self.play.observe(lambda _: self._show_playing(), names="playing")
        self.number.observe(lambda _: self._recompute(), names="value")
        self.checkpoint.observe(lambda _: self._recompute(), names="value")
        self.play.observe(lambda _: self._stop_at_end(), names="value")
        self.play.observe(lambda _: self._render(), names="value")
        self.block.observe(lambda _: self._render(), names="value")
        self.head.observe(lambda _: self._render(), names="value")

    # ---- state
    @property
    def trace(self) -> Trace | None:
        return self._trace

    @property
    def step(self) -> int:
        return self.play.value if self._trace is not None else 0

    @property
    def done(self) -> bool:
        return self._trace is not None and self.step == len(self._trace.steps)

    @property
    def right(self) -> bool | None:
        """True/False once the reading has ended; None before."""
        t, n = self._trace, self._n
        if not self.done or t is None or n is None:  # done means a trace (and its n) is shown
            return None
        return t.finished and t.answer == expected_answer(n)

    @property
    def message(self) -> str:
        return self._message

    def next_step(self) -> None:
        if self._trace is not None and self.play.value < self.play.max:
            self.play.value += 1

    def reset(self) -> None:
        """Back to the prompt (Reset)."""
        self.play.playing = False
        self.play.value = 0

    def stop(self) -> None:
        """Stop playing and stay on the step shown (■ Stop)."""
        self.play.playing = False

    def toggle_play(self) -> None:
        """▶ Play from the step shown (from the prompt again once the reading has ended), or ❚❚ Pause."""
        if self._trace is None:
            return
        if self.play.playing:
            self.play.playing = False
            return
        if self.done:
            self.play.value = 0
        self.play.playing = True

    def _show_playing(self) -> None:
        """▶ Play or ❚❚ Pause: Pause only while a step is still to come (never once the reading has ended)."""
        self.play_button.description = PAUSE if self.play.playing and not self.done else PLAY

    def _stop_at_end(self) -> None:
        """The last step reached: stop the timer here at once, so the button reads ▶ Play again without waiting for
        the browser's timer to notice (it showed ❚❚ Pause for one more tick)."""
        if self.done and self.play.playing:
            self.play.playing = False
        self._show_playing()

    def run_to_end(self) -> None:
        if self._trace is not None:
            self.play.value = self.play.max

    # ---- work
    def _recompute(self) -> None:
        try:
            n = parse_number(self.number.value)
        except ValueError as e:
            self._trace, self._n = None, None
            self._message = str(e)
            self.next_button.disabled = self.play.disabled = self.play_button.disabled = True
            self.play.playing = False
            self.status.value = (
                f'<div class="wt-decode-error" style="color: rgb(178,24,43); padding: 4px 0;">✗ {esc(e)}.</div>'
            )
            self.view.value = ""
            self.say(f"Cannot read that: {e}.")
            return
        trace = greedy_trace(model_for(self.checkpoint.value), parse_prompt(str(n)), max_new=MAX_NEW)
        self._trace, self._n = trace, n
        self.next_button.disabled = self.play.disabled = self.play_button.disabled = False
        with self.hold_trait_notifications(), self.play.hold_trait_notifications():
            self.play.playing = False
            self.play.value = 0
            self.play.max = len(trace.steps)
        self._render()

    def _weights(self, step) -> np.ndarray:
        att = step.attention[self.block.value - 1]  # (h, L, L)
        last = att[:, -1, :]  # (h, L): where the last row looked, per head
        return last.mean(axis=0) if self.head.value == "mean" else last[self.head.value - 1]

    def _render(self) -> None:
        t, k, n = self._trace, self.step, self._n
        if t is None or n is None:  # both are set together, by a number that reads
            return
        self.next_button.disabled = self.done  # after <eos> (or the last new token) there is no next step
        model_name = model_phrase(self.checkpoint.value)
        if k == 0:
            tokens = [VOCAB[i] for i in t.prompt]
            self._message = prompt_message(t, n, model_name)
            self.status.value = f'<div style="padding: 4px 0;">{esc(self._message)}</div>'
            self.view.value = rows_html(tokens, None, None, f"the prompt ({model_name})")
            self.say(self._message)
            return
        s = t.steps[k - 1]
        tokens = [VOCAB[i] for i in s.ids_in]
        picked = VOCAB[s.picked]
        heads = "heads averaged" if self.head.value == "mean" else f"head {self.head.value}"
        caption = (
            f"step {k}: {len(s.ids_in)} rows go in · bars: where the last row ({esc(tokens[-1])}) "
            f"looked, block {self.block.value}, {heads}"
        )
        self._message, self.status.value = step_status(t, k, n)
        written = written_text(t, k)
        weights = self._weights(s)
        self.view.value = rows_html(tokens, weights, picked, caption) + top_scores_html(s.scores)
        looked = int(np.argmax(weights))
        self.say(
            f"{self._message} It looked most at '{tokens[looked]}' (position {looked}, weight "
            f"{weights[looked]:.2f}; block {self.block.value}, {heads}). Written so far: {written}."
        )


def decode_lab(number: int | str = 896, checkpoint: str = "60", **kwargs) -> DecodeLab:
    """The decode lab: type a number, pick a model, press Next step. With ``finished=True`` it opens on the
    whole reading, its last step, so that a saved copy of the notebook pictures a finished run."""
    return DecodeLab(number, checkpoint, **kwargs)
