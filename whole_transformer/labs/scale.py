"""The scale lab (notebook 02): why the token rows are multiplied by √d_model.

Pick the token table's starting std and switch the √d_model factor on or off. The lab shows how
long a token row is when it meets its position row (42 rows drawn with that std, the factor
included) next to the position rows (all √32 ≈ 5.66 long for d_model 64), and their ratio.
Beside it: the held-out accuracies of real training runs stored by ``scale_study`` (60 epochs,
several seeds per setting), the chosen setting's runs marked, every setting sorted by its
starting ratio, so you can see what the runs say matters. The runs stay hidden until the student
acts (moves the std, switches the factor, or presses *Show the training runs*): notebook 02 asks
what they show before the lab, and a Run All must not answer it.

Attributes: ``std`` (SelectionSlider of stds), ``factor`` (Checkbox), ``show`` (Button),
``lengths``, ``runs``, ``verdict``, ``live`` (HTML widgets); ``revealed`` (bool); read-only
``setting``, ``rows`` and ``token_length`` (the token rows the study's runs start from, and their mean:
``scale_study.start_lengths``, the same computation as the stored table's),
``position_length``, ``ratio``, ``stored`` (the stored runs of the chosen setting, maybe empty),
``summaries`` (every stored setting, see ``scale_study.summarize``).

CSS classes: root ``wt-lab wt-scale``; ``wt-scale-std``, ``wt-scale-factor``, ``wt-scale-lengths``
(``data-token``, ``data-position`` and ``data-ratio`` attributes on its inner div),
``wt-scale-runs`` (the table and accuracy bars of the stored runs), ``wt-scale-verdict``,
``wt-scale-show`` (the button), ``wt-scale-live`` (the summary line).
"""

from __future__ import annotations

import functools
import math

import ipywidgets as widgets
import numpy as np

from ..scale_study import (
    D_MODEL,
    SEEDS,
    Setting,
    Summary,
    load_study,
    position_length,
    start_lengths,
    std_label,
    summarize,
)
from . import _html
from ._widgets import LabBox

STDS = (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0, 2.0, 4.0, 8.0)


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6)


@functools.lru_cache(maxsize=32)
def _start_rows(std: float, factor: bool) -> np.ndarray:
    """The token-row lengths of the models the study trains from (one start a seed, 42 rows each): the
    bars, the sentence and the stored table's 'token row' are all this one computation."""
    return np.concatenate([start_lengths(std, factor, seed)[0] for seed in SEEDS])


class ScaleLab(LabBox):
    """Token-row and position-row lengths for a chosen start, beside stored training results."""

    def __init__(self, std: float = 1 / 8, factor: bool = True, study: dict | None = None, revealed: bool = False):
        if not any(_same(std, s) for s in STDS):
            raise ValueError(f"std must be one of {[std_label(s) for s in STDS]}, got {std!r}")
        self.study = study if study is not None else load_study()
        self.summaries: list[Summary] = sorted(summarize(self.study), key=lambda s: s.ratio)
        self.d_model = int(self.study.get("d_model", D_MODEL))
        self.position_length = position_length(self.d_model)
        style = {"description_width": "110px"}
        self.std = widgets.SelectionSlider(
            options=[(std_label(s) + (" = 1/√64" if _same(s, 1 / 8) else ""), s) for s in STDS],
            value=next(s for s in STDS if _same(s, std)),
            description="token-table std",
            style=style,
            layout=widgets.Layout(width="420px", margin="0 16px 0 0"),
            continuous_update=True,
        )
        self.std.add_class("wt-scale-std")
        self.factor = widgets.Checkbox(
            value=bool(factor),
            description="multiply token rows by √d_model = 8",
            indent=False,
            layout=widgets.Layout(width="320px"),
        )
        self.factor.add_class("wt-scale-factor")
        self.show = widgets.Button(description="Show the training runs", layout=widgets.Layout(width="220px"))
        self.show.add_class("wt-scale-show")
        self.revealed = bool(revealed)
        self.lengths, self.runs, self.verdict = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.lengths.add_class("wt-scale-lengths")
        self.runs.add_class("wt-scale-runs")
        self.verdict.add_class("wt-scale-verdict")
        super().__init__(
            [
                widgets.HBox(
                    [self.std, self.factor, self.show],
                    layout=widgets.Layout(align_items="center", flex_flow="row wrap"),
                ),
                self.lengths,
                self.verdict,
                self.runs,
            ],
            "scale",
        )
        self.std.observe(self._act, "value")
        self.factor.observe(self._act, "value")
        self.show.on_click(lambda _b: self._act())
        self._render()

    def _act(self, _change=None) -> None:
        """What any control does: the student has acted, so the stored runs show from now on."""
        self.revealed = True
        self._render()

    @property
    def setting(self) -> Setting:
        return Setting(float(self.std.value), bool(self.factor.value))

    @property
    def rows(self) -> np.ndarray:
        """Lengths of the token rows the study's runs start from (42 a seed, the factor included)."""
        return _start_rows(self.setting.std, self.setting.factor)

    @property
    def token_length(self) -> float:
        return float(self.rows.mean())

    @property
    def ratio(self) -> float:
        return self.token_length / self.position_length

    @property
    def stored(self) -> Summary | None:
        s = self.setting
        return next((m for m in self.summaries if _same(m.setting.std, s.std) and m.setting.factor == s.factor), None)

    def _render(self, _change=None) -> None:
        s = self.setting
        rows = self.rows
        tok, pos = float(rows.mean()), self.position_length
        ratio = tok / pos
        top = max(tok, pos, float(rows.max()))
        factor_text = f" × √{self.d_model}" if s.factor else ""
        self.lengths.value = (
            f'<div class="wt-text" data-token="{tok:.4f}" data-position="{pos:.4f}" data-ratio="{ratio:.4f}" '
            'style="margin-top: 6px;">'
            f"<b>At the start, before any training</b> (d_model {self.d_model}): a token row is {self.d_model} "
            f"numbers of size about {std_label(s.std)}{factor_text}, a position row is {self.d_model // 2} "
            "sin–cos pairs of length 1."
            + _html.bar_chart(
                [("token row", tok), ("position row", pos)],
                fmt="{:.2f} long",
                max_value=top,
                width=320,
                label_width=110,
                colour="rgb(33,102,172)",
            )
            + '<div class="wt-small wt-muted">'
            f"In the {len(SEEDS)} starts the runs train from (seeds {', '.join(map(str, SEEDS))}), the "
            f"{rows.size} token rows run from {rows.min():.2f} to {rows.max():.2f} long; every position row is "
            f"exactly {pos:.2f}. "
            f"Token ÷ position: <b>{ratio:.2f}</b>.</div></div>"
        )
        said = f"{s.label}: a token row starts {tok:.2f} long, a position row {pos:.2f}; ratio {ratio:.2f}."
        self.show.layout.display = "none" if self.revealed else None
        if not self.revealed:
            self.verdict.value = self.runs.value = ""
            self.say(said + " Move a control or press Show the training runs to see what real runs reached.")
            return
        mine = self.stored
        self.verdict.value = self._verdict(s, ratio)
        self.runs.value = self._runs(s)
        self.say(said + (f" Stored runs: {_accuracy_text(mine)}." if mine else " No runs are stored for it."))

    def _verdict(self, s: Setting, ratio: float) -> str:
        mine = self.stored
        if mine is None:
            near = min(self.summaries, key=lambda m: abs(math.log(m.ratio / ratio)))
            return _html.note(
                f"No runs are stored for {_html.esc(s.label)}. The stored setting with the nearest starting ratio "
                f"is {_html.esc(near.setting.label)} (ratio {near.ratio:.2f}): "
                f"{_accuracy_text(near)}."
            )
        twins = [m for m in self.summaries if m is not mine and abs(math.log(m.ratio / mine.ratio)) < 0.15]
        text = f"{_html.esc(mine.setting.label)}: {_accuracy_text(mine)}."
        for t in twins:
            text += (
                f" {_html.esc(t.setting.label)} starts at the same ratio ({t.ratio:.2f}) "
                f"{'with' if t.setting.factor else 'without'} the factor: {_accuracy_text(t)}."
            )
        kind = "ok" if mine.mean_accuracy >= 0.95 else ("error" if mine.mean_accuracy < 0.9 else "info")
        return _html.note(text, kind=kind)

    def _runs(self, s: Setting) -> str:
        rows, chosen = [], None
        for i, m in enumerate(self.summaries):
            if _same(m.setting.std, s.std) and m.setting.factor == s.factor:
                chosen = i
            rows.append(
                [
                    m.setting.label,
                    f"{m.token_length:.2f}",
                    f"{m.ratio:.2f}",
                    " · ".join(str(n) for n in m.held_out),
                    f"{100 * m.mean_accuracy:.0f} %",
                ]
            )
        seeds = len(self.summaries[0].held_out) if self.summaries else 0
        bars = _html.bar_chart(
            [(m.setting.label, 100 * m.mean_accuracy) for m in self.summaries],
            fmt="{:.0f} %",
            max_value=100,
            width=200,
            label_width=170,
            highlight=self.summaries[chosen].setting.label if chosen is not None else None,
        )
        epochs = self.study.get("epochs", "?")
        return (
            f'<div class="wt-h" style="margin-top: 8px;">Real runs: held-out numbers read right after {epochs} '
            f"epochs ({seeds} seeds each, of {self.summaries[0].total if self.summaries else 100})</div>"
            + _html.table(
                ["setting", "token row", "ratio", "held out, per seed", "mean"],
                rows,
                highlight=chosen,
                align=["left", "right", "right", "left", "right"],
                css_class="wt-table wt-scale-table",
            )
            + bars
            + '<div class="wt-small wt-muted">Sorted by the starting ratio of token '
            "to position length. Made by <code>python -m whole_transformer.scale_study</code>.</div>"
        )


def _accuracy_text(m: Summary) -> str:
    per_seed = ", ".join(str(n) for n in m.held_out)
    return f"held out {per_seed} of {m.total} ({100 * m.mean_accuracy:.0f} % on average)"


def scale_lab(std: float = 1 / 8, factor: bool = True, revealed: bool = False) -> ScaleLab:
    """Token-row versus position-row length for a chosen start, beside the stored training runs (shown once the
    student acts, or at once with ``revealed=True``)."""
    return ScaleLab(std, factor, revealed=revealed)
