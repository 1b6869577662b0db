"""The cache lab (notebook 03): a trained model reads a number with a KV cache, one step per press.

``cache_lab()`` reads the number typed in the box with the chosen model (the decode lab's choice of models,
``_decode.CHECKPOINTS``, each model trained with the causal mask: a kept run without it cannot be cached, and asking
for one says so). Each press of *Next step* shows one step: the cached key rows and value rows of the
chosen block and head (one line per token read so far, the row the step added marked "new →" in its label
and outlined), the step's multiply-adds and measured time with the cache and re-reading every row, and the
highest scores both ways, printed to 4 decimals, with whether all the scores agree to the last printed digit.
*Reset* goes back to the prompt. A live line says what the step did.

The whole reading (both ways, timed) is computed once when the number or the model changes, in a few tens of
milliseconds; a step or a change of block or head only redraws HTML.

Attributes tests and notebooks use: ``number`` (Text), ``checkpoint`` (Dropdown), ``next_button``,
``reset_button`` (Buttons), ``block``, ``head`` (Dropdowns, 1…N), ``status``, ``view`` (HTML), and the
read-only ``steps`` (``_cache.CachedStep`` list, empty after bad input), ``step`` (0 … len(steps)), ``done``,
``message``. Methods: ``next_step()``, ``reset()``, ``run_to_end()``.

CSS classes: root ``wt-lab wt-cache``; ``wt-cache-number``, ``wt-cache-checkpoint``, ``wt-cache-next``,
``wt-cache-reset``, ``wt-cache-block``, ``wt-cache-head`` (the controls); ``wt-cache-status`` the line above
the picture (``wt-cache-error`` inside it after bad input); ``wt-cache-view`` the picture; inside it
``wt-cache-rows`` (the tables ``wt-cache-K`` and ``wt-cache-V``, the new row's cells ``wt-cell-on``),
``wt-cache-cost`` (the counts and times), ``wt-cache-same`` and ``wt-cache-verdict`` (the scores both ways).
"""

from __future__ import annotations

import ipywidgets as widgets

from ..task import VOCAB
from ._cache import CachedStep, cost_html, read_with_cache, rows_html, same_html
from ._decode import CHECKPOINTS, check_args, chooser_layout, model_for, model_options, model_phrase, parse_number
from ._html import esc
from ._widgets import LIVE, LabBox

NO_MASK = (
    "{model} has no causal mask, and a KV cache needs one: without it an earlier token's keys and values would change "
    "as later tokens come in, so nothing could be kept. Choose a model trained with the mask."
)


class CacheLab(LabBox):
    """Greedy decoding of one number with a KV cache, step by step, with the cost both ways."""

    def __init__(self, number: int | str = 742, checkpoint: str = "60", block: int = 2, head: int = 1, **kwargs):
        finished = kwargs.pop("finished", False)
        if kwargs:
            raise TypeError(f"cache_lab() got unexpected arguments {sorted(kwargs)}")
        checkpoint, block, n_layers, n_heads = check_args(checkpoint, block, head)
        if not model_for(checkpoint).cfg.causal:
            raise ValueError(NO_MASK.format(model=CHECKPOINTS[checkpoint]))
        self._steps: list[CachedStep] = []
        self._n: int | None = None
        self._step = 0
        self._message = ""
        self._make_controls(number, checkpoint, (block, n_layers), (head, n_heads))
        self.status = widgets.HTML()
        self.view = widgets.HTML()
        for w, cls in [
            (self.number, "number"),
            (self.checkpoint, "checkpoint"),
            (self.next_button, "next"),
            (self.reset_button, "reset"),
            (self.block, "block"),
            (self.head, "head"),
            (self.status, "status"),
            (self.view, "view"),
        ]:
            w.add_class(f"wt-cache-{cls}")
        controls = widgets.HBox(
            [self.number, self.checkpoint, self.next_button, self.reset_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        super().__init__([controls, widgets.HBox([self.block, self.head]), self.status, LIVE, self.view], "cache")
        self.next_button.on_click(lambda _: self.next_step())
        self.reset_button.on_click(lambda _: self.reset())
        self.number.observe(lambda _: self._recompute(), names="value")
        self.checkpoint.observe(lambda _: self._recompute(), names="value")
        self.block.observe(lambda _: self._render(), names="value")
        self.head.observe(lambda _: self._render(), names="value")
        self._recompute()
        if finished:  # open on the last step, so that a saved copy pictures a whole reading
            self.run_to_end()

    def _make_controls(self, number, checkpoint: str, block: tuple[int, int], head: tuple[int, int]) -> None:
        """The number box and the model (as in the decode lab), Next step and Reset, and which cache is shown."""
        self.number = widgets.Text(
            value=str(number),
            placeholder="0 to 999",
            description="number",
            continuous_update=False,  # read on Enter or when the box loses focus
            layout=widgets.Layout(width="160px"),
        )
        # the decode lab's chooser, every kept run that has a causal mask (a cache needs one)
        models = [(label, key) for label, key in model_options() if model_for(key).cfg.causal]
        self.checkpoint = widgets.Dropdown(
            options=models, value=checkpoint, description="model", **chooser_layout(models)
        )
        self.next_button = widgets.Button(description="Next step", button_style="primary", icon="step-forward")
        self.reset_button = widgets.Button(description="Reset", icon="undo")
        (b, n_layers), (h, n_heads) = block, head
        self.block = widgets.Dropdown(
            options=[(f"block {i}", i) for i in range(1, n_layers + 1)], value=b, description="cache of"
        )
        self.head = widgets.Dropdown(
            options=[(f"head {i}", i) for i in range(1, n_heads + 1)], value=h, description="heads"
        )
        for w in (self.block, self.head):
            w.layout, w.style = widgets.Layout(width="200px"), {"description_width": "60px"}

    # ---- state
    @property
    def steps(self) -> list[CachedStep]:
        return self._steps

    @property
    def step(self) -> int:
        return self._step

    @property
    def done(self) -> bool:
        return bool(self._steps) and self._step == len(self._steps)

    @property
    def message(self) -> str:
        return self._message

    def next_step(self) -> None:
        if self._steps and self._step < len(self._steps):
            self._step += 1
            self._render()

    def reset(self) -> None:
        self._step = 0
        self._render()

    def run_to_end(self) -> None:
        if self._steps:
            self._step = len(self._steps)
            self._render()

    # ---- work
    def _recompute(self) -> None:
        try:
            n = parse_number(self.number.value)
        except ValueError as e:
            self._steps, self._n, self._step = [], None, 0
            self._message = str(e)
            self.next_button.disabled = True
            self.status.value = f'<div class="wt-cache-error" style="color: rgb(178,24,43);">✗ {esc(e)}.</div>'
            self.view.value = ""
            self.say(f"Cannot read that: {e}.")
            return
        self._steps, self._n, self._step = read_with_cache(model_for(self.checkpoint.value), n), n, 0
        self._render()

    def _render(self) -> None:
        if not self._steps or self._n is None:
            return
        k, n = self._step, self._n
        self.next_button.disabled = self.done
        model = CHECKPOINTS[self.checkpoint.value]
        first = self._steps[0]
        if k == 0:
            self._message = (
                f"The prompt of {n} has {first.new_rows} tokens and the cache is empty. Press Next step: the whole "
                f"prompt goes through the blocks of {model_phrase(self.checkpoint.value)}, and its keys and values "
                "fill the cache."
            )
            self.status.value = f'<div class="wt-small wt-muted">nothing written yet · model: {esc(model)}</div>'
            self.view.value = ""
            self.say(self._message)
            return
        s = self._steps[k - 1]
        written = " ".join(VOCAB[st.picked] for st in self._steps[:k])
        self._message = (
            f"Step {k}: {s.new_rows} row{'s' if s.new_rows > 1 else ''} through the blocks, the cache now holds "
            f"{len(s.ids_in)}; it picks '{VOCAB[s.picked]}'. Multiply-adds: {s.macs[0]:,} with the cache, "
            f"{s.macs[1]:,} re-reading every row."
        )
        same = "the same to 4 decimals both ways" if s.same_printed else "NOT the same both ways"
        self.status.value = (  # the step itself is told by the live line just under it
            f'<div class="wt-small wt-muted">written so far: <b>{esc(written)}</b> · model: {esc(model)}</div>'
        )
        self.view.value = (
            rows_html(s, self.block.value, self.head.value)
            + '<div class="wt-h">the cost of this step</div>'
            + cost_html(s)
            + '<div class="wt-h">the highest scores, both ways</div>'
            + same_html(s)
        )
        shown = f"block {self.block.value}, head {self.head.value}"
        self.say(f"{self._message} Scores {same}. Cached rows shown: {shown}. Written so far: {written}.")


def cache_lab(number: int | str = 742, checkpoint: str = "60", **kwargs) -> CacheLab:
    """The cache lab: type a number, pick a model, press Next step. With ``finished=True`` it opens on the last
    step of the reading, so that a saved copy of the notebook pictures a whole reading."""
    return CacheLab(number, checkpoint, **kwargs)
