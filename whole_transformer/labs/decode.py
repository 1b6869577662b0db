"""The decode lab (notebook 03): a trained model reads a number aloud, one token per step.

``decode_lab()`` shows the shipped model (after 2 or after 60 epochs of training) reading the
number typed in the box. Each press of *Next step* runs one step of greedy decoding: the rows
that go in, the token picked and appended, the five highest scores of the last row as bars,
and, above the input tokens, bars for where the last row's attention looked (the last block
with its heads averaged, unless another block or head is chosen). *Reset* goes back to the
prompt; *Play* steps on its own. When the model has written ``<eos>`` (or 6 new tokens) the lab
says whether the answer is right.

The whole reading is computed once when the number or the model changes (a few milliseconds);
a step only redraws light HTML, so it responds in about a millisecond.

Attributes tests and notebooks use: ``number`` (Text), ``checkpoint`` (Dropdown, values "60"
and "2"), ``next_button``, ``reset_button`` (Buttons), ``play`` (Play: its value is the step
shown), ``block`` (Dropdown of block numbers 1…N), ``head`` (Dropdown: "mean" or 1…h),
``status``, ``view`` (HTML), and the read-only ``trace`` (the ``decode.Trace``, or None after
bad input), ``step`` (0 … len(trace.steps)), ``done``, ``right``, ``message``. Methods:
``next_step()``, ``reset()``, ``run_to_end()``.

CSS classes: root ``wt-lab wt-decode``; ``wt-decode-controls``; ``wt-decode-next``,
``wt-decode-reset``, ``wt-decode-play``, ``wt-decode-number``, ``wt-decode-checkpoint``,
``wt-decode-block``, ``wt-decode-head`` (the controls); ``wt-decode-status`` the line above the
picture (``wt-decode-right`` / ``wt-decode-wrong`` inside it when the reading has ended,
``wt-decode-error`` after bad input); ``wt-decode-view`` the picture; inside it
``wt-decode-rows`` the input tokens, each a ``wt-decode-token`` with ``data-weight`` and an
attention bar ``wt-decode-att``; ``wt-decode-picked`` the appended token; ``wt-decode-top`` the
bar chart of the top scores, each bar ``wt-decode-score`` with ``data-token`` and ``data-score``.

``held_out_table(numbers, {label: model})`` reads numbers with several models and shows what each
says, as words, with ✓/✗ and a count (notebook 03 shows the 100 held-out numbers after 60 and
after 2 epochs). CSS classes: ``wt-heldout``; each answer ``wt-heldout-right`` / ``wt-heldout-wrong``.
"""

from __future__ import annotations

import time

import ipywidgets as widgets
import numpy as np
import torch

from ..decode import MAX_NEW, Trace, greedy_trace, read_numbers
from ..numpy_model import softmax_rows
from ..task import VOCAB, expected_answer, parse_prompt
from ..train import load_model
from ._html import esc

CHECKPOINTS = {"60": "after 60 epochs", "2": "after 2 epochs"}
TOP = 5  # how many of the last row's scores are drawn
_MODELS: dict[str, torch.nn.Module] = {}


def model_for(name: str) -> torch.nn.Module:
    """The shipped model after 60 or after 2 epochs, loaded once per kernel."""
    if name not in CHECKPOINTS:
        raise ValueError(f"unknown checkpoint {name!r}: use one of {sorted(CHECKPOINTS)}")
    if name not in _MODELS:
        _MODELS[name] = load_model(name)
    return _MODELS[name]


def parse_number(text: str) -> int:
    """'896', '8 9 6', '896 =' → 896; anything else raises ValueError saying what to type."""
    try:
        ids = parse_prompt(text)
    except ValueError:
        raise ValueError(f"cannot read {text!r}: type a whole number from 0 to 999, like 896") from None
    return int("".join(VOCAB[i] for i in ids[:-1]))


def _token_box(tok: str, extra_class: str = "", style: str = "") -> str:
    return (f'<span class="wt-decode-box {extra_class}" style="display: inline-block; min-width: 34px; '
            f'padding: 3px 5px; border: 1px solid #999; border-radius: 3px; text-align: center; '
            f'background: white; {style}">{esc(tok)}</span>')


def rows_html(tokens: list[str], weights: np.ndarray | None, picked: str | None, caption: str) -> str:
    """The input tokens with attention bars above them, then an arrow and the picked token."""
    cols = []
    bar_h = 56
    for i, tok in enumerate(tokens):
        w = float(weights[i]) if weights is not None else None
        if w is None:
            bar = f'<div style="height: {bar_h + 14}px;"></div>'
        else:
            px = max(1, round(bar_h * w)) if w > 0.005 else 0
            bar = (f'<div style="height: {bar_h + 14}px; display: flex; flex-direction: column; '
                   f'justify-content: flex-end; align-items: center;">'
                   f'<span style="font-size: 10px; color: #555;">{w:.2f}</span>'
                   f'<div class="wt-decode-att" data-weight="{w:.4f}" style="width: 22px; height: {px}px; '
                   f'background: rgb(230,120,30);"></div></div>')
        weight_attr = f' data-weight="{w:.4f}"' if w is not None else ""
        cols.append(f'<div class="wt-decode-token" data-token="{esc(tok)}"{weight_attr} '
                    f'style="display: flex; flex-direction: column; align-items: center; gap: 2px;">'
                    f'{bar}{_token_box(tok)}<span style="font-size: 10px; color: #888;">{i}</span></div>')
    if picked is not None:
        cols.append('<div style="align-self: flex-end; padding: 0 6px 20px; font-size: 18px;">→</div>')
        cols.append('<div style="display: flex; flex-direction: column; align-items: center; gap: 2px;">'
                    f'<div style="height: {bar_h + 14}px;"></div>'
                    + _token_box(picked, "wt-decode-picked",
                                 "background: rgb(255,236,179); border: 2px solid rgb(200,120,0); font-weight: bold;")
                    + '<span style="font-size: 10px; color: #888;">new</span></div>')
    return (f'<div style="font-size: 12px; color: #444; margin: 2px 0;">{caption}</div>'
            f'<div class="wt-decode-rows" style="display: flex; align-items: flex-end; gap: 3px; '
            f'font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px;">{"".join(cols)}</div>')


def top_scores_html(scores: np.ndarray, top: int = TOP) -> str:
    """The highest scores of the last row as bars (length: probability after softmax)."""
    probs = softmax_rows(scores.astype(np.float64))
    order = np.argsort(-scores, kind="stable")[:top]
    out = ['<div class="wt-decode-top" style="font-family: ui-monospace, Menlo, Consolas, monospace; '
           'font-size: 12px; margin-top: 6px;">'
           '<div style="color: #444; margin-bottom: 2px;">the last row\'s highest scores (logits); '
           'bar = probability after softmax</div>']
    for rank, i in enumerate(order):
        p = float(probs[i])
        on = rank == 0
        out.append(
            f'<div class="wt-decode-score{" wt-bar-on" if on else ""}" data-token="{esc(VOCAB[i])}" '
            f'data-score="{float(scores[i]):.4f}" style="display: flex; align-items: center; gap: 6px;">'
            f'<span style="width: 64px; text-align: right;{" font-weight: bold;" if on else ""}">'
            f'{esc(VOCAB[i])}</span>'
            f'<span style="display: inline-block; width: 220px; background: #f1f1f1;">'
            f'<span style="display: block; width: {round(220 * p)}px; height: 13px; '
            f'background: {"rgb(33,102,172)" if on else "rgb(140,170,210)"};"></span></span>'
            f'<span>{float(scores[i]):6.2f} &nbsp; p = {p:.2f}</span></div>')
    out.append("</div>")
    return "".join(out)


#: The Play widget draws ▶ (play, then ❚❚ pause) and ■ (stop) as bare icons. ipywidgets puts the tooltip on
#: the widget's box when it has no description (on the description label otherwise), so the Play widget
#: has none: the browser shows this over both buttons.
PLAY_TOOLTIP = "▶ plays the steps one by one (press ❚❚ to pause); ■ stops and goes back to the prompt"


class DecodeLab(widgets.VBox):
    """Greedy decoding of one number, step by step, with the last row's attention and top scores."""

    def __init__(self, number: int | str = 896, checkpoint: str = "60", block: int | None = None,
                 head: str | int = "mean", interval_ms: int = 900, finished: bool = False):
        checkpoint = str(checkpoint)
        if checkpoint not in CHECKPOINTS:
            raise ValueError(f"checkpoint must be one of {sorted(CHECKPOINTS)}, got {checkpoint!r}")
        n_layers = model_for(checkpoint).cfg.n_layers
        n_heads = model_for(checkpoint).cfg.n_heads
        block = n_layers if block is None else block
        if block not in range(1, n_layers + 1):
            raise ValueError(f"block must be 1 to {n_layers}, got {block!r}")
        if head != "mean" and head not in range(1, n_heads + 1):
            raise ValueError(f"head must be 'mean' or 1 to {n_heads}, got {head!r}")
        self._trace: Trace | None = None
        self._n: int | None = None
        self._message = ""
        self.number = widgets.Text(value=str(number), description="number", continuous_update=False,
                                   layout=widgets.Layout(width="170px"))
        self.checkpoint = widgets.Dropdown(options=[(v, k) for k, v in CHECKPOINTS.items()], value=checkpoint,
                                           description="model", layout=widgets.Layout(width="230px"))
        self.next_button = widgets.Button(description="Next step", button_style="primary", icon="step-forward")
        self.reset_button = widgets.Button(description="Reset", icon="undo")
        self.play = widgets.Play(value=0, min=0, max=1, step=1, interval=interval_ms, show_repeat=False,
                                 tooltip=PLAY_TOOLTIP)
        self.block = widgets.Dropdown(options=[(f"block {b}", b) for b in range(1, n_layers + 1)], value=block,
                                      description="attention", layout=widgets.Layout(width="200px"))
        self.head = widgets.Dropdown(options=[("heads averaged", "mean")] + [(f"head {h}", h)
                                                                              for h in range(1, n_heads + 1)],
                                     value=head, layout=widgets.Layout(width="150px"))
        self.status = widgets.HTML()
        self.view = widgets.HTML()
        for w, cls in [(self.number, "wt-decode-number"), (self.checkpoint, "wt-decode-checkpoint"),
                       (self.next_button, "wt-decode-next"), (self.reset_button, "wt-decode-reset"),
                       (self.play, "wt-decode-play"), (self.block, "wt-decode-block"), (self.head, "wt-decode-head"),
                       (self.status, "wt-decode-status"), (self.view, "wt-decode-view")]:
            w.add_class(cls)
        controls = widgets.HBox([self.number, self.checkpoint, self.next_button, self.reset_button, self.play])
        controls.add_class("wt-decode-controls")
        choose = widgets.HBox([self.block, self.head])
        super().__init__([controls, choose, self.status, self.view])
        self.add_class("wt-lab")
        self.add_class("wt-decode")
        self.next_button.on_click(lambda _: self.next_step())
        self.reset_button.on_click(lambda _: self.reset())
        self.number.observe(lambda _: self._recompute(), names="value")
        self.checkpoint.observe(lambda _: self._recompute(), names="value")
        self.play.observe(lambda _: self._render(), names="value")
        self.block.observe(lambda _: self._render(), names="value")
        self.head.observe(lambda _: self._render(), names="value")
        self._recompute()
        if finished:  # open on the whole reading (Reset goes back to the prompt)
            self.run_to_end()

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
        if not self.done:
            return None
        return self._trace.finished and self._trace.answer == expected_answer(self._n)

    @property
    def message(self) -> str:
        return self._message

    def next_step(self) -> None:
        if self._trace is not None and self.play.value < self.play.max:
            self.play.value += 1

    def reset(self) -> None:
        self.play.playing = False
        self.play.value = 0

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
            self.next_button.disabled = self.play.disabled = True
            self.play.playing = False
            self.status.value = (f'<div class="wt-decode-error" style="color: rgb(178,24,43); padding: 4px 0;">'
                                 f'✗ {esc(e)}.</div>')
            self.view.value = ""
            return
        trace = greedy_trace(model_for(self.checkpoint.value), parse_prompt(str(n)), max_new=MAX_NEW)
        self._trace, self._n = trace, n
        self.next_button.disabled = self.play.disabled = False
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
        if self._trace is None:
            return
        t, k, n = self._trace, self.step, self._n
        self.next_button.disabled = self.done  # after <eos> (or the last new token) there is no next step
        model_name = CHECKPOINTS[self.checkpoint.value]
        if k == 0:
            tokens = [VOCAB[i] for i in t.prompt]
            self._message = (f"The prompt of {n} has {len(t.prompt)} tokens. Press Next step: the model reads "
                             f"all {len(t.prompt)} rows and its last row picks the first word.")
            self.status.value = f'<div style="padding: 4px 0;">{esc(self._message)}</div>'
            self.view.value = rows_html(tokens, None, None, f"the prompt ({model_name})")
            return
        s = t.steps[k - 1]
        tokens = [VOCAB[i] for i in s.ids_in]
        picked = VOCAB[s.picked]
        heads = "heads averaged" if self.head.value == "mean" else f"head {self.head.value}"
        caption = (f"step {k}: {len(s.ids_in)} rows go in · bars: where the last row ({esc(tokens[-1])}) "
                   f"looked, block {self.block.value}, {heads}")
        written = " ".join(VOCAB[i] for i in t.ids[len(t.prompt): len(t.prompt) + k])
        line = f"Step {k}: {len(s.ids_in)} rows in, the last row picks '{picked}'."  # not "of n": that tells the length
        verdict = ""
        if k == len(t.steps):
            want = expected_answer(n)
            if self.right:
                line = f"Done after {k} steps: {n} reads '{t.answer}'."
                verdict = ('<span class="wt-decode-right" style="color: rgb(46,125,50); font-weight: bold;">'
                           "✓ Right.</span>")
            else:
                ended = "wrote <eos>" if t.finished else f"stopped after {MAX_NEW} new tokens without <eos>"
                line = f"Done after {k} steps ({ended}): it says '{t.answer}'."
                verdict = (f'<span class="wt-decode-wrong" style="color: rgb(178,24,43); font-weight: bold;">'
                           f"✗ Wrong: {n} is '{esc(want)}'.</span>")
        self._message = line + (" ✓ Right." if self.right else (f" ✗ Wrong: {n} is '{expected_answer(n)}'."
                                                                if self.done else ""))
        self.status.value = (f'<div style="padding: 4px 0;">{esc(line)} {verdict}</div>'
                             f'<div style="font-size: 12px; color: #555;">written so far: '
                             f'<b>{esc(written)}</b></div>')
        self.view.value = rows_html(tokens, self._weights(s), picked, caption) + top_scores_html(s.scores)


def decode_lab(number: int | str = 896, checkpoint: str = "60", **kwargs) -> DecodeLab:
    """The decode lab: type a number, pick a model, press Next step. With ``finished=True`` it opens on the
    whole reading, its last step, so that a saved copy of the notebook pictures a finished run."""
    return DecodeLab(number, checkpoint, **kwargs)


def step_seconds(lab: DecodeLab, repeats: int = 20) -> list[float]:
    """Time one step (Next step after Reset … to the end) in seconds, for tests and benchmarks."""
    times = []
    for _ in range(repeats):
        lab.reset()
        while not lab.done:
            start = time.perf_counter()
            lab.next_step()
            times.append(time.perf_counter() - start)
    return times


class HeldOutTable:
    """Numbers read aloud by several models, as an HTML table with ✓ and ✗ (shown by Jupyter)."""

    def __init__(self, numbers, models: dict[str, torch.nn.Module]):
        self.numbers = [int(n) for n in numbers]
        if not self.numbers:
            raise ValueError("give at least one number to read")
        self.said = {label: read_numbers(m, self.numbers) for label, m in models.items()}
        self.right = {label: sum(said[n] == expected_answer(n) for n in self.numbers)
                      for label, said in self.said.items()}

    def summary(self) -> str:
        return " · ".join(f"{label}: {self.right[label]}/{len(self.numbers)} right" for label in self.said)

    def __repr__(self) -> str:
        lines = [self.summary()]
        for n in self.numbers:
            lines.append(f"{n:>3}  " + "  |  ".join(
                f"{'✓' if said[n] == expected_answer(n) else '✗'} {said[n]}" for said in self.said.values()))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        th = "padding: 2px 8px; text-align: left; border-bottom: 1px solid #888; position: sticky; top: 0; " \
             "background: white;"
        head = "".join(f'<th style="{th}">{esc(label)}</th>' for label in self.said)
        rows = []
        for n in self.numbers:
            cells = []
            for said in self.said.values():
                ok = said[n] == expected_answer(n)
                colour = "rgb(46,125,50)" if ok else "rgb(178,24,43)"
                cells.append(f'<td class="wt-heldout-{"right" if ok else "wrong"}" style="padding: 1px 8px;">'
                             f'<span style="color: {colour};">{"✓" if ok else "✗"}</span> '
                             f"{esc(said[n]) or '(nothing)'}</td>")
            rows.append(f'<tr><td style="padding: 1px 8px; text-align: right;">{n}</td>{"".join(cells)}</tr>')
        return (f'<div class="wt-heldout" style="font-family: ui-monospace, Menlo, monospace; font-size: 12px;">'
                f'<div style="margin-bottom: 4px;"><b>{esc(self.summary())}</b></div>'
                f'<div class="wt-heldout-note" style="margin-bottom: 4px; color: #555;">all {len(self.numbers)} '
                f'numbers are in the table{"; scroll inside it to see them all" if len(self.numbers) > 15 else ""}'
                f'</div>'
                f'<div style="max-height: 360px; overflow: auto; display: inline-block;">'
                f'<table style="border-collapse: collapse;"><tr><th style="{th}">number</th>{head}</tr>'
                f'{"".join(rows)}</table></div></div>')


def held_out_table(numbers, models: dict[str, torch.nn.Module]) -> HeldOutTable:
    """What each model says for each number, as words, with ✓/✗ and a count of the right ones."""
    return HeldOutTable(numbers, models)
