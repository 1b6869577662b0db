"""The training lab (notebook 04): train the real model live, then let it read a few numbers.

``training_lab()`` trains a model from scratch with ``train.train`` (batches of 64, Adam, lr 1e-3): the run the
student chooses (the course's model or one of the ablations below), from the seed they choose, for the epochs
they choose; after every epoch it draws the progress bar, the training loss and the held-out loss (log scale) and
the share of the 100 held-out numbers it reads right. When the run ends it reads a few held-out numbers aloud.
*Keep this run* (or ``lab.keep(name)``) saves the finished run under a name of the student's, with its settings
and history, in ``your-models/`` beside the notebook (``_yours``); 03's labs offer every kept run by its name and
settings. A name already kept is never written over unless *replace* is ticked (``replace=True``). A lab's runs
stay on its chart, and a lab made with ``training_lab(..., compare=other_lab)`` also draws the runs finished in
that other lab, so an ablation is seen beside the course's model while each lab shows its own run:

* ``no_mask``: no causal mask. Each position can see the token it must guess: the training loss
  falls lower than with the mask, but reading new numbers fails.
* ``std1``: token table initialised with std 1 instead of 1/√d_model, so after × √d_model each
  token row is about 11 times longer than its position row (the course's stored runs read 78, 69 and
  81 of the 100 held-out numbers; see notebook 02).
* ``no_scale``: token rows not multiplied by √d_model, so they start about 1 long beside position rows about
  5.7 long: the positions drown the tokens.
* ``copy``: the copy task ``1 2 3 = 1 2 3``, the debugging habit: any correct model learns it.

Nothing trains on import or on construction: the Train button (or ``lab.train(...)`` in a
cell) starts a run. Under nbgrader's autograding (``NBGRADER_EXECUTION`` set) every run is cut
to ``QUICK_EPOCHS`` epochs so the notebook still runs top to bottom in well under a minute.
Training uses one torch thread: for this small model it is several times faster than two on a
busy machine.

Attributes tests and notebooks use: ``run_choice`` (Dropdown of RUNS keys), ``epochs``
(IntSlider), ``seed`` (BoundedIntText), ``train_button``, ``progress`` (IntProgress), ``status``, ``chart``,
``table``, ``reads`` (HTML), ``runs`` ({key: train.Run} of the runs done), ``message``; to keep a run:
``keep_name`` (Text), ``replace`` (Checkbox), ``keep_button``.

CSS classes: root ``wt-lab wt-training``; ``wt-training-run``, ``wt-training-epochs``, ``wt-training-seed``,
``wt-training-train`` (the controls); ``wt-training-keep-name``, ``wt-training-replace``, ``wt-training-keep``;
``wt-training-progress`` the progress bar;
``wt-training-status`` the line under it; ``wt-training-chart`` the chart, an ``<svg>`` with one
``wt-loss-line``, one ``wt-heldloss-line`` and one ``wt-acc-line`` (``data-run`` = the run key, ``data-points`` = epochs
drawn) per run; ``wt-training-table`` the per-epoch table; ``wt-training-reads`` the numbers read
after the run, each row ``wt-read`` with ``data-right`` "1" or "0".
"""

from __future__ import annotations

import ipywidgets as widgets

from ..envflags import nbgrader_execution
from ..train import EpochLog, Run, TrainConfig, train
from . import _yours
from ._chart import ACC_INSET, SAMPLE, chart_svg, chart_text, marker_svg, reads_html, table_html  # noqa: F401
from ._runs import RUNS
from ._widgets import LIVE, LabBox

QUICK_EPOCHS = 2  # per run, under autograding
MAX_EPOCHS = 60  # the most the notebook asks for: End on the slider is 60, the course's training
MAX_SEED = 999_999


def autograding() -> bool:
    """True while nbgrader executes the notebook (it sets NBGRADER_EXECUTION)."""
    return bool(nbgrader_execution())


class TrainingLab(LabBox):
    """Train the model live; the loss curve and held-out accuracy update after every epoch."""

    def __init__(self, run: str = "main", epochs: int = 60, compare: TrainingLab | None = None, seed: int = 0):
        if compare is not None and not isinstance(compare, TrainingLab):
            raise ValueError(f"compare must be another training lab, got {compare!r}")
        self.compare = compare
        if run not in RUNS:
            raise ValueError(f"unknown run {run!r}: choose one of {sorted(RUNS)}")
        self._check_epochs(epochs)
        self._check_seed(seed)
        self.runs: dict[str, Run] = {}
        self._last: tuple[str, int, Run] | None = None  # the run finished last: (its key, its seed, the run)
        self._live: dict[str, list[EpochLog]] = {}
        self._message = "Press Train to train a fresh model."
        self._make_controls(run, epochs, seed)
        self._make_keep_controls()
        self.progress = widgets.IntProgress(
            value=0, min=0, max=epochs, description="epoch 0", layout=widgets.Layout(width="420px")
        )
        self.chart, self.table, self.reads = (widgets.HTML() for _ in range(3))
        for wdg, cls in [
            (self.run_choice, "wt-training-run"),
            (self.epochs, "wt-training-epochs"),
            (self.seed, "wt-training-seed"),
            (self.train_button, "wt-training-train"),
            (self.keep_name, "wt-training-keep-name"),
            (self.replace, "wt-training-replace"),
            (self.keep_button, "wt-training-keep"),
            (self.progress, "wt-training-progress"),
            (self.chart, "wt-training-chart"),
            (self.table, "wt-training-table"),
            (self.reads, "wt-training-reads"),
        ]:
            wdg.add_class(cls)
        super().__init__(
            [
                widgets.HBox([self.run_choice, self.epochs, self.seed, self.train_button]),
                self.progress,
                LIVE,
                self.chart,
                widgets.HBox([self.table, self.reads]),
                widgets.HBox([self.keep_name, self.replace, self.keep_button]),
            ],
            "training",
        )
        self.status = self.live
        self.status.add_class("wt-training-status")
        self.train_button.on_click(lambda _: self.train())
        self.keep_button.on_click(lambda _: self._keep_clicked())
        self.replace.observe(lambda _: self._say_replace(), names="value")
        self._set_status(
            self._message + (f" (autograding: each run is cut to {QUICK_EPOCHS} epochs)" if autograding() else "")
        )
        self._draw()

    def _make_controls(self, run: str, epochs: int, seed: int) -> None:
        """The row on top: which run, how many epochs, from which seed, and Train."""
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
        self.seed = widgets.BoundedIntText(
            value=seed, min=0, max=MAX_SEED, description="seed", layout=widgets.Layout(width="170px")
        )
        self.seed.style.description_width = "40px"
        self.train_button = widgets.Button(description="Train", button_style="primary", icon="play")

    def _make_keep_controls(self) -> None:
        """The row under the chart that keeps the run finished last: its name, replace, and Keep this run."""
        self.keep_name = widgets.Text(
            value="",
            placeholder="train first, then name the run",
            description="keep as",
            layout=widgets.Layout(width="340px"),
        )
        self.replace = widgets.Checkbox(
            value=False,
            description="replace a kept run of that name",
            indent=False,
            layout=widgets.Layout(width="260px"),
        )
        self.keep_button = widgets.Button(
            description="Keep this run", icon="save", disabled=True, layout=widgets.Layout(width="150px")
        )

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

    @staticmethod
    def _check_seed(seed) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}")

    @property
    def message(self) -> str:
        return self._message

    def _say_replace(self) -> None:
        """The summary line says what Keep this run will do with a run already kept under the name."""
        what = "replaces" if self.replace.value else "never replaces"
        self.say(f"{self._message} · Keep this run {what} a run kept under the same name")

    def _set_status(self, text: str) -> None:
        self._message = text
        self.say(text)

    def train(self, run: str | None = None, epochs: int | None = None, seed: int | None = None) -> Run:
        """Train a fresh model (run: a key of RUNS; epochs: 1…60; seed: the random start, the seed box's if None)
        and draw it live; returns the Run. Keep it with ``keep`` to read it in notebook 03's labs."""
        run = self.run_choice.value if run is None else run
        if run not in RUNS:
            raise ValueError(f"unknown run {run!r}: choose one of {sorted(RUNS)}")
        epochs = self.epochs.value if epochs is None else epochs
        self._check_epochs(epochs)
        seed = self.seed.value if seed is None else seed
        self._check_seed(seed)
        asked = epochs
        if autograding():
            epochs = min(epochs, QUICK_EPOCHS)
        spec = RUNS[run]
        with self.hold_trait_notifications():
            self.run_choice.value, self.epochs.value, self.seed.value = run, asked, seed
        self.train_button.disabled = self.keep_button.disabled = True
        self.progress.max, self.progress.value, self.progress.description = epochs, 0, "epoch 0"
        self.progress.bar_style = ""
        cut = f" (autograding: cut from {asked} to {epochs} epochs)" if epochs < asked else ""
        self._set_status(f"Training {spec.label} from seed {seed}: {epochs} epochs{cut}…")
        self._live[run] = []
        self.reads.value = ""

        def after_epoch(log: EpochLog, model) -> None:
            self._live[run].append(log)
            self._set_status(
                f"{spec.label}, epoch {log.epoch} of {epochs}: training loss {log.loss:.4f}, "
                f"held-out loss {log.held_out_loss:.4f}, held out {100 * log.held_out:.0f} % right{cut}"
            )
            self._draw()
            self.table.value = table_html(self._live[run])
            self.progress.description = f"epoch {log.epoch}"
            self.progress.value = log.epoch

        try:
            result = train(
                spec.model_config, TrainConfig(epochs=epochs, seed=seed, task=spec.task), callback=after_epoch
            )
        finally:
            self.train_button.disabled = False
        self.runs[run] = result
        self._last = (run, seed, result)
        self.keep_name.value = self.suggested_name()
        self.keep_button.disabled = False
        self.progress.bar_style = "success"
        last = result.history[-1]
        self._set_status(
            f"{spec.label}, seed {seed}, after {epochs} epochs: training loss {last.loss:.4f}, held-out loss "
            f"{last.held_out_loss:.4f}, {100 * last.held_out:.0f} % of the 100 held-out numbers right{cut}. "
            "To read it in notebook 03's labs, keep it under a name (Keep this run, below)."
        )
        self.reads.value = reads_html(result, spec.task)
        return result

    def suggested_name(self) -> str:
        """A name for the run finished last that no kept run has yet: "no-mask-seed-3-15-epochs", then "…-2"."""
        if self._last is None:
            return ""
        run, seed, result = self._last
        base = f"{run.replace('_', '-')}-seed-{seed}-{len(result.history)}-epochs"
        taken, name, k = set(_yours.names()), base, 1
        while name in taken:
            k += 1
            name = f"{base}-{k}"
        return name

    def keep(self, name: str | None = None, replace: bool | None = None) -> str:
        """Keep the run finished last under ``name`` (the name box's if None) for notebook 03's labs, with its
        settings and history; a name already kept is written over only with ``replace`` (the box's if None).
        Returns the name; a clear error if there is no run yet, the name cannot be a file's, or it is taken."""
        if self._last is None:
            raise ValueError("nothing to keep yet: press Train first, then keep the run it trains")
        run, seed, result = self._last
        name = _yours.check_name(self.keep_name.value if name is None else name)
        replace = self.replace.value if replace is None else replace
        _yours.save(result, name, run, RUNS[run].label, replace=bool(replace))
        self.keep_name.value, self.replace.value = name, False
        self._set_status(
            f"Kept as “{_yours.label(name)}” in {_yours.FOLDER}/ beside this notebook: notebook 03's labs offer it "
            "by this name (run their cells again)."
        )
        return name

    def _keep_clicked(self) -> None:
        """The Keep button: keep the run, or say in the status line why not and what to do."""
        try:
            self.keep()
        except ValueError as e:
            self._set_status(str(e))


def training_lab(run: str = "main", epochs: int = 60, compare: TrainingLab | None = None, seed: int = 0) -> TrainingLab:
    """The training lab. Nothing trains until Train is pressed or ``lab.train()`` is called, and nothing is kept
    until Keep this run is pressed or ``lab.keep(name)`` is called.

    Each lab shows its own runs; ``compare=other_lab`` also draws the runs finished in that lab, so an
    ablation can be seen beside the course's model without the two labs sharing one chart."""
    return TrainingLab(run, epochs, compare, seed)
