"""The ``labs`` group: one change of each lab from Python (a slider, a button, a typed value, a decode step), timed
until the lab's callbacks return; the training lab's Train button, and its redraw after each epoch."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.figures import median, ms, p90
from benchmarks.rows import Bench, Group, Row


@dataclass
class LabChange:
    """One change a student makes to a lab, made again and again and timed until the lab's callbacks return."""

    lab: str  # the function of whole_transformer.labs that builds it
    change: str  # what one change is
    act: Callable  # act(lab, i): make change number i (must change something)
    before: Callable | None = None  # before(lab, i): untimed preparation (e.g. Reset at the end)
    target_ms: float = 50.0


def _cycle(values):
    values = list(values)
    return lambda i: values[(i + 1) % len(values)]


def _set(attr: str, values):
    pick = _cycle(values)

    def act(lab, i):
        getattr(lab, attr).value = pick(i)

    return act


def _toggle(attr: str):
    def act(lab, i):
        w = getattr(lab, attr)
        w.value = not w.value

    return act


def _click(attr: str):
    return lambda lab, i: getattr(lab, attr).click()


def _microscope_next_prep(lab, i):
    if lab.step.value >= lab.step.max:
        lab.step.value = 0


def _decode_prep(lab, i):
    if lab.done:
        lab.reset()


def _slider_values(attr: str):
    """Every option of a selection slider, or every integer of an int slider, walked in order."""

    def act(lab, i):
        w = getattr(lab, attr)
        if hasattr(w, "options") and w.options:
            opts = [o[1] if isinstance(o, tuple) else o for o in w.options]
            w.value = opts[(opts.index(w.value) + 1) % len(opts)]
        else:
            w.value = w.min if w.value >= w.max else w.value + 1

    return act


def _sampling_cut(lab, i):
    lab.top_k.value, lab.top_p.value = [(0, 1.0), (5, 1.0), (0, 0.9), (10, 0.6)][i % 4]


def _new_seed(lab, i):
    lab.seed.value = i


def _machine_part(lab, i):
    names = [n for n, btn in lab.buttons.items() if n in lab.part.options]
    current = lab.part.value
    lab.buttons[names[(names.index(current) + 1) % len(names)]].click()


LAB_CHANGES = [
    LabChange("machine_lab", "d_model slider", _slider_values("d_model")),
    LabChange("machine_lab", "blocks slider", _slider_values("blocks")),
    LabChange("machine_lab", "click a part of the stack", _machine_part),
    LabChange("microscope_lab", "Next ▶ button (one stage)", _click("next"), _microscope_next_prep),
    LabChange("microscope_lab", "step slider", _slider_values("step")),
    LabChange("microscope_lab", "prompt typed (8 9 = ↔ 4 2 7 =)", _set("prompt", ["8 9 =", "4 2 7 ="])),
    LabChange("scale_lab", "token-table std slider", _slider_values("std")),
    LabChange("scale_lab", "√d_model checkbox", _toggle("factor")),
    LabChange("decode_lab", "Next step button", _click("next_button"), _decode_prep, target_ms=30.0),
    LabChange("decode_lab", "number typed (896 ↔ 427)", _set("number", ["896", "427"])),
    LabChange("decode_lab", "model dropdown (60 ↔ 2 epochs)", _set("checkpoint", ["60", "2"])),
    LabChange("cache_lab", "Next step button", _click("next_button"), _decode_prep),
    LabChange("cache_lab", "number typed (742 ↔ 777), read and timed both ways", _set("number", ["742", "777"])),
    LabChange("cache_lab", "block dropdown (1 ↔ 2)", _set("block", [1, 2])),
    LabChange("sampling_lab", "temperature slider (0.5 → 1 → 2 → 3)", _set("temperature", [0.5, 1.0, 2.0, 3.0])),
    LabChange("sampling_lab", "top-k and top-p sliders", _sampling_cut),
    LabChange("sampling_lab", "step slider (1 … 5 of 742)", _slider_values("step")),
    LabChange("sampling_lab", "Read it 20 times button (a new seed first)", _click("read_button"), _new_seed),
    LabChange(
        "batch_lab",
        "numbers typed (0-63 ↔ 5, 17, 905 ↔ 0-9, 100-109)",
        _set("numbers", ["0-63", "5, 17, 905", "0-9, 100-109"]),
    ),
]


def bench_training_lab(b: Bench) -> None:
    """The training lab's one change is the Train button: a whole run, redrawn after every epoch.

    Two rows: the wall time of Train (60 epochs of the main run, as a student presses it) against the
    full-training target, and the lab's own work after each epoch (progress, status, SVG chart, table),
    timed by wrapping the callback the lab hands to ``train.train``.
    """
    import whole_transformer.labs.training as mod  # lazy: torch and ipywidgets

    redraws: list[float] = []
    real_train = mod.train

    def timed_train(*args, callback=None, **kw):
        def timed(log, model):
            t = time.perf_counter()
            callback(log, model)
            redraws.append(time.perf_counter() - t)

        return real_train(*args, callback=timed if callback else None, **kw)

    lab = mod.training_lab()
    epochs = 3 if b.quick else 60  # --quick: a short run, not compared with the target
    seconds, held = [], []
    mod.train = timed_train
    try:
        for _ in range(b.runs(2, 1)):
            lab.run_choice.value, lab.epochs.value = "main", epochs
            t = time.perf_counter()
            lab.train_button.click()
            seconds.append(time.perf_counter() - t)
            held.append(round(100 * lab.runs["main"].history[-1].held_out))
    finally:
        mod.train = real_train
    _training_lab_rows(b, epochs, seconds, held, redraws)


def _training_lab_rows(b: Bench, epochs: int, seconds: list[float], held: list[int], redraws: list[float]) -> None:
    """Train's wall time (against the full-training target after 60 epochs) and the redraw after one epoch."""
    med = median(seconds)
    full = epochs == 60
    b.add(
        Row(
            group="labs",
            item=f"training_lab: Train button (main run, {epochs} epochs, redrawn each epoch)",
            value=med,
            unit="s",
            runs=len(seconds),
            target="≤ 8 s (as full training)" if full else "",
            ok=(med <= 8.0) if full else None,
            note=f"held out after {epochs} epochs: {', '.join(f'{h}/100' for h in held)}; the lab trains on one torch "
            "thread" + ("" if full else "; --quick: a short run, not compared with the 60-epoch target"),
        )
    )
    m = ms(median(redraws))
    b.add(
        Row(
            group="labs",
            item="training_lab: redraw after one epoch (chart, table, status)",
            value=m,
            unit="ms",
            runs=len(redraws),
            target="≤ 50 ms",
            ok=m <= 50.0,
            note=f"p90 {ms(p90(redraws)):.1f} ms, max {ms(max(redraws)):.1f} ms",
        )
    )


def bench_labs(b: Bench) -> None:
    built: dict[str, tuple[object, float, float]] = {}
    n_changes, warm = b.runs(30, 3), 2
    for c in LAB_CHANGES:
        label = f"{c.lab}: {c.change}"
        try:
            if c.lab not in built:
                import whole_transformer.labs as labs  # lazy: torch and ipywidgets

                factory = getattr(labs, c.lab)
                t = time.perf_counter()
                factory()  # the first build loads what the lab needs (checkpoints, ipywidgets)
                first = time.perf_counter() - t
                t = time.perf_counter()
                lab = factory()
                built[c.lab] = (lab, first, time.perf_counter() - t)
            lab, first, again = built[c.lab]
            times = []
            for i in range(warm + n_changes):
                if c.before is not None:
                    c.before(lab, i)
                t = time.perf_counter()
                c.act(lab, i)
                dt = time.perf_counter() - t
                if i >= warm:
                    times.append(dt)
            med = ms(median(times))
            b.add(
                Row(
                    group="labs",
                    item=label,
                    value=med,
                    unit="ms",
                    runs=len(times),
                    target=f"≤ {c.target_ms:.0f} ms",
                    ok=med <= c.target_ms,
                    note=f"p90 {ms(p90(times)):.1f} ms, max {ms(max(times)):.1f} ms; lab built in {ms(again):.0f} ms "
                    f"({ms(first):.0f} ms the first time)",
                )
            )
        except Exception as e:  # noqa: BLE001 - a lab that changed its parts: report, go on with the others
            traceback.print_exc()
            b.add(Row(group="labs", item=label, status=f"error: {type(e).__name__}: {e}"))
    bench_training_lab(b)


GROUP = Group(
    "labs",
    "each lab: one change from Python",
    bench_labs,
    how="- **labs**: each lab is built in this process (no kernel, so no front end), then one control is changed "
    "from Python the way a student changes it (a slider value, `button.click()`, a typed value) and the time "
    "until the lab's callbacks have returned is measured; 2 warm-up changes, then the median of the rest. "
    "Sending the new widget state to the browser and drawing it are not included.",
)
