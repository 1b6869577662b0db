"""The training lab (notebook 04): train the real model live, then let it read a few numbers.

``training_lab()`` trains the course's model from scratch with ``train.train`` (batches of 64,
Adam, lr 1e-3) and draws, after every epoch, the progress bar, the training loss and the
held-out loss (log scale) and the share of the 100 held-out numbers it reads right. When the run
ends it reads a few held-out numbers aloud; a finished run of the course's model (not under
autograding) is saved as ``your-model.pt`` beside the notebook, "your model" in 03's labs
(``_yours``). A lab's runs stay on its chart, and a lab made with ``training_lab(...,
compare=other_lab)`` also draws the runs finished in that other lab, so an ablation is seen
beside the course's model while each lab shows its own run:

* ``no_mask``: no causal mask. Each position can see the token it must guess: the training loss
  falls lower than with the mask, but reading new numbers fails.
* ``std1``: token table initialised with std 1 instead of 1/√d_model, so after × √d_model each
  token row is about 11 times longer than its position row (the course's stored runs read 78, 69 and
  81 of the 100 held-out numbers; see notebook 02).
* ``copy``: the copy task ``1 2 3 = 1 2 3``, the debugging habit: any correct model learns it.

Nothing trains on import or on construction: the Train button (or ``lab.train(...)`` in a
cell) starts a run. Under nbgrader's autograding (``NBGRADER_EXECUTION`` set) every run is cut
to ``QUICK_EPOCHS`` epochs so the notebook still runs top to bottom in well under a minute.
Training uses one torch thread: for this small model it is several times faster than two on a
busy machine.

Attributes tests and notebooks use: ``run_choice`` (Dropdown of RUNS keys), ``epochs``
(IntSlider), ``train_button``, ``progress`` (IntProgress), ``status``, ``chart``, ``table``,
``reads`` (HTML), ``runs`` ({key: train.Run} of the runs done), ``message``.

CSS classes: root ``wt-lab wt-training``; ``wt-training-run``, ``wt-training-epochs``,
``wt-training-train`` (the controls); ``wt-training-progress`` the progress bar;
``wt-training-status`` the line under it; ``wt-training-chart`` the chart, an ``<svg>`` with one
``wt-loss-line``, one ``wt-heldloss-line`` and one ``wt-acc-line`` (``data-run`` = the run key, ``data-points`` = epochs
drawn) per run; ``wt-training-table`` the per-epoch table; ``wt-training-reads`` the numbers read
after the run, each row ``wt-read`` with ``data-right`` "1" or "0".
"""

from __future__ import annotations

import ipywidgets as widgets

from ..decode import read_numbers
from ..envflags import nbgrader_execution
from ..task import expected_answer, split
from ..train import EpochLog, Run, TrainConfig, save_checkpoint, train
from . import _yours
from ._chart import ACC_INSET, chart_svg, chart_text, marker_svg  # noqa: F401  (the chart's names)
from ._html import esc
from ._runs import RUNS
from ._widgets import LIVE, LabBox

QUICK_EPOCHS = 2  # per run, under autograding
MAX_EPOCHS = 60  # the most the notebook asks for: End on the slider is 60, the course's training
SAMPLE = 8  # held-out numbers read aloud after a run
YOURS_RUN = "main"  # the run saved as the student's own model (see _yours)


def autograding() -> bool:
    """True while nbgrader executes the notebook (it sets NBGRADER_EXECUTION)."""
    return bool(nbgrader_execution())


class TrainingLab(LabBox):
    """Train the model live; the loss curve and held-out accuracy update after every epoch."""

    def __init__(self, run: str = "main", epochs: int = 60, compare: TrainingLab | None = None):
        if compare is not None and not isinstance(compare, TrainingLab):
            raise ValueError(f"compare must be another training lab, got {compare!r}")
        self.compare = compare
        if run not in RUNS:
            raise ValueError(f"unknown run {run!r}: choose one of {sorted(RUNS)}")
        self._check_epochs(epochs)
        self.runs: dict[str, Run] = {}
        self._live: dict[str, list[EpochLog]] = {}
        self._message = "Press Train to train a fresh model."
        self.run_choice = widgets.Dropdown(
            options=[(s.label, k) for k, s in RUNS.items()],
            value=run,
            description="run",
            layout=widgets.Layout(width="260px"),
        )
        self.epochs = widgets.IntSlider(
            value=epochs,
            min=1,
            max=MAX_EPOCHS,
            description="epochs",
            continuous_update=False,
            layout=widgets.Layout(width="320px"),
        )
        self.train_button = widgets.Button(description="Train", button_style="primary", icon="play")
        self.progress = widgets.IntProgress(
            value=0, min=0, max=epochs, description="epoch 0", layout=widgets.Layout(width="420px")
        )
        self.chart, self.table, self.reads = (widgets.HTML() for _ in range(3))
        for wdg, cls in [
            (self.run_choice, "wt-training-run"),
            (self.epochs, "wt-training-epochs"),
            (self.train_button, "wt-training-train"),
            (self.progress, "wt-training-progress"),
            (self.chart, "wt-training-chart"),
            (self.table, "wt-training-table"),
            (self.reads, "wt-training-reads"),
        ]:
            wdg.add_class(cls)
        super().__init__(
            [
                widgets.HBox([self.run_choice, self.epochs, self.train_button]),
                self.progress,
                LIVE,
                self.chart,
                widgets.HBox([self.table, self.reads]),
            ],
            "training",
        )
        self.status = self.live
        self.status.add_class("wt-training-status")
        self.train_button.on_click(lambda _: self.train())
        self._set_status(
            self._message + (f" (autograding: each run is cut to {QUICK_EPOCHS} epochs)" if autograding() else "")
        )
        self._draw()

    def _draw(self) -> None:
        """The chart: this lab's runs, and the finished runs of the lab it compares with (if any)."""
        theirs = (
            {} if self.compare is None else {k: r.history for k, r in self.compare.runs.items() if k not in self._live}
        )
        self.chart.value = chart_svg({**theirs, **self._live}, borrowed=frozenset(theirs))

    @staticmethod
    def _check_epochs(epochs) -> None:
        if isinstance(epochs, bool) or not isinstance(epochs, int) or not 1 <= epochs <= MAX_EPOCHS:
            raise ValueError(f"epochs must be a whole number from 1 to {MAX_EPOCHS}, got {epochs!r}")

    @property
    def message(self) -> str:
        return self._message

    def _set_status(self, text: str) -> None:
        self._message = text
        self.say(text)

    def train(self, run: str | None = None, epochs: int | None = None, seed: int = 0) -> Run:
        """Train a fresh model (run: a key of RUNS; epochs: 1…100) and draw it live; returns the Run."""
        run = self.run_choice.value if run is None else run
        if run not in RUNS:
            raise ValueError(f"unknown run {run!r}: choose one of {sorted(RUNS)}")
        epochs = self.epochs.value if epochs is None else epochs
        self._check_epochs(epochs)
        asked = epochs
        if autograding():
            epochs = min(epochs, QUICK_EPOCHS)
        spec = RUNS[run]
        with self.hold_trait_notifications():
            self.run_choice.value, self.epochs.value = run, asked
        self.train_button.disabled = True
        self.progress.max, self.progress.value, self.progress.description = epochs, 0, "epoch 0"
        self.progress.bar_style = ""
        cut = f" (autograding: cut from {asked} to {epochs} epochs)" if epochs < asked else ""
        self._set_status(f"Training {spec.label}: {epochs} epochs{cut}…")
        self._live[run] = []
        self.reads.value = ""

        def after_epoch(log: EpochLog, model) -> None:
            self._live[run].append(log)
            self._set_status(
                f"{spec.label}, epoch {log.epoch} of {epochs}: training loss {log.loss:.4f}, "
                f"held-out loss {log.held_out_loss:.4f}, held out {100 * log.held_out:.0f} % right{cut}"
            )
            self._draw()
            self.table.value = self._table_html(self._live[run])
            self.progress.description = f"epoch {log.epoch}"
            self.progress.value = log.epoch

        try:
            result = train(
                spec.model_config, TrainConfig(epochs=epochs, seed=seed, task=spec.task), callback=after_epoch
            )
        finally:
            self.train_button.disabled = False
        self.runs[run] = result
        self.progress.bar_style = "success"
        last = result.history[-1]
        self._set_status(
            f"{spec.label}, after {epochs} epochs: training loss {last.loss:.4f}, held-out loss "
            f"{last.held_out_loss:.4f}, {100 * last.held_out:.0f} % of the 100 held-out numbers right{cut}."
            + self._save_yours(run, result)
        )
        self.reads.value = self._reads_html(result, spec.task)
        return result

    @staticmethod
    def _save_yours(run: str, result: Run) -> str:
        """The course's model, once trained here, is saved as "your model" for notebook 03's labs (not under
        autograding, whose runs are cut short). Returns what the status line adds."""
        if run != YOURS_RUN or autograding():
            return ""
        save_checkpoint(result, _yours.path())
        return f" Saved as {_yours.FILE} beside this notebook: notebook 03's labs now offer it as “your model”."

    def _table_html(self, hist: list[EpochLog]) -> str:
        th = "padding: 1px 8px; text-align: right; border-bottom: 1px solid #888;"
        rows = "".join(
            f'<tr><td style="padding: 1px 8px; text-align: right;">{lg.epoch}</td>'
            f'<td style="padding: 1px 8px; text-align: right;">{lg.loss:.4f}</td>'
            f'<td style="padding: 1px 8px; text-align: right;">{lg.held_out_loss:.4f}</td>'
            f'<td style="padding: 1px 8px; text-align: right;">{100 * lg.held_out:.0f} %</td>'
            f'<td style="padding: 1px 8px; text-align: right;">{lg.seconds:.2f}</td></tr>'
            for lg in hist[-8:]
        )
        return (
            f'<table style="border-collapse: collapse; font-family: ui-monospace, Menlo, monospace; '
            f'font-size: 12px; margin-right: 24px;"><tr><th style="{th}">epoch</th>'
            f'<th style="{th}">training loss</th><th style="{th}">held-out loss</th>'
            f'<th style="{th}">held out right</th><th style="{th}">s</th></tr>{rows}</table>'
        )

    def _reads_html(self, result: Run, task: str) -> str:
        _, held_out = split()
        sample = held_out[:: max(1, len(held_out) // SAMPLE)][:SAMPLE]
        said = read_numbers(result.model, sample)  # for the copy task too: whatever the model writes
        rows = []
        for n in sample:
            ok = said[n] == expected_answer(n, task)
            rows.append(
                f'<tr class="wt-read" data-right="{int(ok)}"><td style="padding: 1px 8px; '
                f'text-align: right;">{n}</td><td style="padding: 1px 8px;">{esc(said[n]) or "(nothing)"}'
                f'</td><td style="padding: 1px 8px; color: {"rgb(46,125,50)" if ok else "rgb(178,24,43)"};">'
                f"{'✓ right' if ok else '✗ wrong, it is ' + esc(expected_answer(n, task))}</td></tr>"
            )
        th = "padding: 1px 8px; text-align: left; border-bottom: 1px solid #888;"
        return (
            f'<div style="font-size: 12px;">held-out numbers, read by this model:</div>'
            f'<table style="border-collapse: collapse; font-family: ui-monospace, Menlo, monospace; '
            f'font-size: 12px;"><tr><th style="{th}">number</th><th style="{th}">it says</th>'
            f'<th style="{th}">right?</th></tr>{"".join(rows)}</table>'
        )


def training_lab(run: str = "main", epochs: int = 60, compare: TrainingLab | None = None) -> TrainingLab:
    """The training lab. Nothing trains until Train is pressed or ``lab.train()`` is called.

    Each lab shows its own runs; ``compare=other_lab`` also draws the runs finished in that lab, so an
    ablation can be seen beside the course's model without the two labs sharing one chart."""
    return TrainingLab(run, epochs, compare)
