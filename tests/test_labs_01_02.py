"""The labs of notebooks 01 and 02: set widget values from Python, check what each lab shows.

machine_lab (shapes, parameter counts, heads that divide d_model), microscope_lab (every step's
tensor equals the NumPy twin's, shapes with named axes, the full model's shapes, the stepper),
block_picture (the microscope's shapes and numbers), scale_lab (row lengths, the stored runs),
the shared HTML helpers, the answer checks of notebooks 01 and 02, and the response time of one
change in each lab (a generous bound here; benchmarks/bench.py measures against 50 ms).
"""

from __future__ import annotations

import html
import json
import math
import re
import statistics
import time
from pathlib import Path

import numpy as np
import pytest

from whole_transformer import checks, scale_study
from whole_transformer.labs import _html, block_picture, machine_lab, microscope_lab, scale_lab
from whole_transformer.labs.machine import D_MODELS, head_options, nearest_heads, part_names
from whole_transformer.labs.microscope import FULL_SIZES, MAX_COLS, full_shape
from whole_transformer.model import ModelConfig, parameter_counts, parameter_table
from whole_transformer.steps import NAMES, trace
from whole_transformer.task import VOCAB, parse_prompt
from whole_transformer.train import load_model


def text(widget_html: str) -> str:
    """What a reader sees: tags dropped, entities decoded, spaces joined."""
    inline = re.sub(r"</?(span|b|i|code)\b[^>]*>", "", widget_html)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).replace("\xa0", " ").split())


def cell_values(widget_html: str) -> np.ndarray:
    return np.array([float(v) for v in re.findall(r'class="wt-cell[^"]*" data-value="([^"]+)"', widget_html)])


def drawn_order(a: np.ndarray) -> np.ndarray:
    """The values of a as the microscope's heatmaps list them: head by head, then column chunks of
    MAX_COLS (the 42 scores are drawn as three tables), row by row."""
    slices = a if a.ndim == 3 else [a.reshape(1, -1) if a.ndim == 1 else a]
    out = []
    for s in slices:
        for first in range(0, s.shape[1], MAX_COLS):
            out.append(s[:, first : first + MAX_COLS].reshape(-1))
    return np.concatenate(out)


def median_ms(action, n: int = 15) -> float:
    times = []
    for i in range(n):
        start = time.perf_counter()
        action(i)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


@pytest.fixture(scope="module")
def tiny():
    return load_model("microscope")


# ------------------------------------------------------------------------------------------ machine lab
def test_machine_defaults_show_72106_from_the_parameter_table():
    lab = machine_lab()
    assert lab.total == 72_106
    assert lab.counts == parameter_counts(ModelConfig())
    assert 'data-total="72106"' in lab.table.value and "72,106" in text(lab.table.value)
    for part, count, formula in parameter_table(ModelConfig()):
        assert f"{count:,}" in text(lab.table.value) and html.escape(formula).replace(
            "&#x27;", "'"
        ) in lab.table.value.replace("&#x27;", "'"), part
    assert lab.part.value == "block 1"
    assert "33,280" in text(lab.detail.value)


def test_machine_heads_leave_the_total_unchanged_and_say_so():
    lab = machine_lab()
    lab.heads.value = 8
    assert lab.total == 72_106
    shown = text(lab.change.value)
    assert "heads 4 → 8" in shown and "72,106 → 72,106" in shown and "unchanged" in shown
    assert "8 heads of d_k = 64 / 8 = 8 columns" in text(lab.detail.value)
    assert "unchanged" in lab.said and "Selected: block 1, 33,280 parameters" in lab.said


def test_machine_shows_no_attention_scores_shape_that_notebook_02_asks_for():
    lab = machine_lab()
    for part in lab.part.options:
        lab.part.value = part
        for inside in lab.inside.options if part.startswith("block") else ["whole block"]:
            lab.inside.value = inside
            shown = text(lab.detail.value) + text(lab.table.value) + text(lab.bars.value) + lab.said
            assert "L_q" not in shown and "L_k" not in shown and "scores" not in shown, (part, inside)


def test_machine_inside_buttons_pick_the_ffn_of_a_block():
    lab = machine_lab()
    assert lab.inside.layout.display is None  # a block is chosen: the inside buttons show
    lab.inside.value = "FFN"
    card = text(lab.detail.value)
    assert card.startswith("block 1 · FFN") and "16,576" in card and "hidden (B 64, L 8, d_ff 128)" in card
    assert 'class="wt-row-on"' in lab.table.value.split("one FFN")[0].rsplit("<tr", 1)[1]
    assert "Selected: block 1, FFN, 16,576 parameters" in lab.said
    lab.inside.value = "attention"
    assert "16,448" in text(lab.detail.value)
    lab.part.value = "output layer"
    assert lab.inside.layout.display == "none"  # no inside for the other parts
    assert text(lab.detail.value).startswith("output layer")


def test_machine_block_shares_are_of_the_block_and_drawn_to_it():
    lab = machine_lab()
    block = lab.bars.value.split("wt-bars-block")[1]
    assert "16,448 (49.4 % of the block)" in text(block)
    widths = dict(re.findall(r'data-label="([^"]+)"[^>]*>.*?wt-bar-fill" style="width: (\d+)px', block))
    assert int(widths["attention"]) == round(220 * 16448 / 33280)  # the bar is 49.4 % of its track
    assert "66,560 (92.3 % of the total)" in text(lab.bars.value)


@pytest.mark.parametrize("d_model", D_MODELS)
def test_machine_heads_slider_offers_only_divisors(d_model):
    lab = machine_lab()
    lab.heads.value = 16
    lab.d_model.value = d_model
    assert all(d_model % h == 0 for h in lab.heads.options)
    assert lab.heads.value in lab.heads.options
    assert lab.heads.value == nearest_heads(d_model, 16)
    assert lab.total == parameter_counts(ModelConfig(d_model=d_model, n_heads=lab.heads.value))["total"]


def test_machine_keeps_heads_when_still_valid_and_takes_the_next_smaller_otherwise():
    assert head_options(24) == (1, 2, 3, 4, 6, 8, 12)
    assert nearest_heads(24, 16) == 12 and nearest_heads(24, 4) == 4 and nearest_heads(8, 16) == 8
    lab = machine_lab(n_heads=16)
    lab.d_model.value = 24
    assert lab.heads.value == 12
    lab.d_model.value = 96
    assert lab.heads.value == 12  # 96 / 12 = 8: still valid, so kept


def test_machine_sizes_follow_parameter_table_and_the_change_line():
    lab = machine_lab()
    lab.d_model.value = 128
    lab.d_ff.value = 512
    lab.blocks.value = 3
    cfg = ModelConfig(d_model=128, n_heads=4, n_layers=3, d_ff=512)
    assert lab.config == cfg
    assert lab.counts == parameter_counts(cfg)
    assert f"{parameter_counts(cfg)['total']:,}" in text(lab.table.value)
    assert "blocks 2 → 3" in text(lab.change.value)


def test_machine_bars_add_up_to_the_total():
    lab = machine_lab(d_model=32, n_heads=2, n_layers=5, d_ff=64)
    model_bars = lab.bars.value.split("wt-bars-block")[0]
    bar = r'class="wt-bar[^"]*" role="listitem" data-label="[^"]+" data-value="([^"]+)"'
    values = [float(v) for v in re.findall(bar, model_bars)]
    assert len(values) == 4 and sum(values) == lab.total
    assert "5 blocks" in text(lab.bars.value)


def test_machine_stack_and_part_selection():
    lab = machine_lab()
    lab.blocks.value = 4
    assert list(lab.part.options) == part_names(4)
    shown = [b for b in lab._picture.block_box.children if b in lab.buttons.values()]
    assert [b.description for b in shown] == ["▶ block 1", "block 2", "block 3", "block 4"]
    lab.buttons["block 4"].click()
    assert lab.part.value == "block 4" and "wt-part-on" in lab.buttons["block 4"]._dom_classes
    assert lab.buttons["block 4"].description == "▶ block 4"  # selected: a mark as well as a colour
    assert "wt-part-on" not in lab.buttons["block 1"]._dom_classes
    lab.blocks.value = 2  # the selected block is gone: the last block is selected instead
    assert lab.part.value == "block 2"
    lab.buttons["output layer"].click()
    card = text(lab.detail.value)
    assert "input (B 64, L 8, d_model 64)" in card and "output (B 64, L 8, n_vocab 42)" in card
    assert "2,730" in card and "64 × 42 + 42" in card
    lab.part.value = "+ positions"
    assert "parameters 0" in text(lab.detail.value) and "fixed sinusoids" in text(lab.detail.value)
    lab.part.value = "token table"
    assert "input (B 64, L 8)" in text(lab.detail.value) and "42 × 64" in text(lab.detail.value)
    with pytest.raises(ValueError, match="unknown part"):
        lab.select("block 7")


def test_machine_batch_and_length_change_shapes_not_counts():
    lab = machine_lab()
    lab.batch.value = 2
    lab.length.value = 5
    assert lab.total == 72_106
    assert lab.shapes["output layer"][1] == ((2, 5, 42), ("B", "L", "n_vocab"))
    assert lab.shapes["token table"][0] == ((2, 5), ("B", "L"))
    assert "(B 2, L 5, d_model 64)" in text(lab.detail.value)
    assert "unchanged" in text(lab.change.value)
    stack = " ".join(text(w.value) for w in lab.stack.children if hasattr(w, "value") and isinstance(w.value, str))
    assert "logits (B 2, L 5, n_vocab 42)" in stack and "ids (B 2, L 5)" in stack


def test_machine_rejects_bad_sizes():
    with pytest.raises(ValueError, match="heads must divide"):
        machine_lab(d_model=24, n_heads=5)
    with pytest.raises(ValueError, match="d_model must be one of"):
        machine_lab(d_model=63)
    with pytest.raises(ValueError, match="unknown part"):
        machine_lab(part="block 3")


# ------------------------------------------------------------------------------------------ microscope lab
def test_microscope_steps_are_the_numpy_twin_from_ids_to_the_word(tiny):
    lab = microscope_lab(model=tiny)
    ids = parse_prompt("8 9 =")
    steps = trace(tiny, ids)
    assert lab.ids == ids
    assert [s.name for s in lab.stages] == ["ids", *[s.name for s in steps], "next word"]
    assert set(NAMES) <= {s.name for s in lab.stages}
    assert lab.step.max == len(steps) + 1
    for i, want in enumerate(steps, start=1):
        lab.step.value = i
        got = lab.current
        assert got.name == want.name and got.block == want.block
        np.testing.assert_array_equal(got.array, want.array)
        shown = cell_values(lab.heatmap.value)
        assert shown.size == want.array.size, want.name
        np.testing.assert_allclose(shown, drawn_order(want.array), rtol=1e-5, atol=1e-9, err_msg=want.name)
        assert f"step {i} (0–{len(steps) + 1}): {want.name}" in text(lab.title.value)


def test_microscope_shapes_are_named_and_full_model_shapes_match_the_course(tiny):
    lab = microscope_lab(model=tiny)
    expected = {
        "ids": ("(L 3)", "(B 64, L 8)"),
        "token rows": ("(L 3, d_model 6)", "(B 64, L 8, d_model 64)"),
        "Q": ("(h 1, L 3, d_k 6)", "(B 64, h 4, L 8, d_k 16)"),
        "scores": ("(h 1, L_q 3, L_k 3)", "(B 64, h 4, L_q 8, L_k 8)"),
        "weights": ("(h 1, L_q 3, L_k 3)", "(B 64, h 4, L_q 8, L_k 8)"),
        "FFN hidden": ("(L 3, d_ff 12)", "(B 64, L 8, d_ff 128)"),
        "logits": ("(L 3, V 42)", "(B 64, L 8, V 42)"),
        "next word": ("(V 42)", "(B 64, V 42)"),
    }
    seen = set()
    for i, stage in enumerate(lab.stages):
        lab.step.value = i
        if stage.name in expected:
            tiny_shape, full = expected[stage.name]
            assert tiny_shape in text(lab.shape.value), stage.name
            assert full in text(lab.full.value), stage.name
            seen.add(stage.name)
        assert text(lab.sentence.value), f"step {stage.name} has no sentence"
    assert seen == set(expected)
    assert full_shape(("h", "L_q", "L_k")) == ((64, 4, 8, 8), ("B", "h", "L_q", "L_k"))
    assert FULL_SIZES == {"B": 64, "L": 8, "L_q": 8, "L_k": 8, "d_model": 64, "h": 4, "d_k": 16, "d_ff": 128, "V": 42}


def test_microscope_last_step_is_the_word_the_model_writes(tiny):
    import torch

    lab = microscope_lab(model=tiny)
    lab.step.value = lab.step.max
    with torch.no_grad():
        want = VOCAB[int(tiny(torch.tensor([parse_prompt("8 9 =")]))[0, -1].argmax())]
    assert lab.word == want == "eighty"
    assert lab.current.name == "next word"
    assert "→ eighty" in text(lab.tokens.value)
    np.testing.assert_array_equal(lab.current.array, trace(tiny, lab.ids)[-1].array[-1])


def test_microscope_previous_and_next_stay_in_range(tiny):
    lab = microscope_lab(model=tiny)
    assert lab.step.value == 0 and lab.prev.disabled and not lab.next.disabled
    lab.prev.click()
    assert lab.step.value == 0
    lab.next.click()
    lab.next.click()
    assert lab.step.value == 2 and lab.current.name == "scaled"
    lab.prev.click()
    assert lab.current.name == "token rows"
    lab.step.value = lab.step.max
    assert lab.next.disabled
    lab.next.click()
    assert lab.step.value == lab.step.max


def test_microscope_reads_typed_digits_and_explains_a_bad_entry(tiny):
    lab = microscope_lab(model=tiny, step=5)
    lab.prompt.value = "427"
    assert lab.ids == parse_prompt("4 2 7 =") and lab.step.value == 5
    np.testing.assert_array_equal(lab.current.array, trace(tiny, lab.ids)[4].array)
    assert "(h 1, L 4, d_k 6)" in text(lab.shape.value)
    assert lab.error.value == ""
    lab.prompt.value = "12 34"
    shown = text(lab.error.value)
    with pytest.raises(ValueError) as err:
        parse_prompt("12 34")
    assert str(err.value) in shown and "Still showing '4 2 7 ='" in shown
    assert lab.ids == parse_prompt("427")  # the last good prompt stays
    lab.prompt.value = "5 ="
    assert lab.error.value == "" and lab.ids == parse_prompt("5")
    with pytest.raises(ValueError, match="cannot read"):
        microscope_lab("four", model=tiny)


# ------------------------------------------------------------------------------------------ block picture
@pytest.mark.package
def test_block_picture_carries_the_microscope_shapes_and_numbers(tiny):
    pic = block_picture(model=tiny)
    assert pic.shapes == {"x": "(L 3, d_model 6)", "weights": "(h 1, L_q 3, L_k 3)", "hidden": "(L 3, d_ff 12)"}
    assert pic.png[:8] == b"\x89PNG\r\n\x1a\n"
    words = [t.get_text() for t in pic.figure.axes[0].texts]
    joined = " ".join(words)
    for label in (
        "LayerNorm 1",
        "LayerNorm 2",
        "attention, 1 head",
        "FFN 6 → 12 → 6",
        "150 parameters",
        "162 parameters",
        "336 parameters",
        "weights (h 1, L_q 3, L_k 3)",
        "hidden (L 3, d_ff 12)",
    ):
        assert label in joined, label
    steps = trace(tiny, parse_prompt("8 9 ="))
    by = {s.label: s.array for s in steps}
    np.testing.assert_array_equal(pic.rows["residual 2"], by["block 1 · residual 2"][-1])
    assert "wt-block" in pic._dom_classes


# ------------------------------------------------------------------------------------------ scale lab
def test_scale_lab_lengths_for_each_start():
    lab = scale_lab()
    assert math.isclose(lab.position_length, math.sqrt(32), rel_tol=1e-6)
    assert 7 < lab.token_length < 9 and 1.2 < lab.ratio < 1.6  # std 1/8 × 8: about 8 long
    lab.factor.value = False
    assert 0.85 < lab.token_length < 1.15
    lab.std.value = 1.0
    assert 7 < lab.token_length < 9  # std 1 without the factor: as long as the course's rows
    lab.factor.value = True
    assert 56 < lab.token_length < 72 and 10 < lab.ratio < 12.7
    shown = lab.lengths.value
    assert f'data-ratio="{lab.ratio:.4f}"' in shown and "token row" in text(shown)


def test_scale_lab_waits_for_the_student_before_it_shows_the_runs():
    for act in (
        lambda lab: lab.show.click(),
        lambda lab: setattr(lab.factor, "value", False),
        lambda lab: setattr(lab.std, "value", 1.0),
    ):
        lab = scale_lab()
        assert not lab.revealed and lab.runs.value == "" and lab.verdict.value == ""
        assert "held out" not in lab.said and "press Show the training runs" in lab.said
        assert "%" not in text(lab.lengths.value)  # no accuracy anywhere before the student acts
        act(lab)
        assert lab.revealed and "Real runs" in text(lab.runs.value) and lab.show.layout.display == "none"
        assert "Stored runs: held out" in lab.said or "No runs are stored" in lab.said


def test_scale_lab_shows_the_stored_runs_of_the_chosen_setting():
    study = scale_study.load_study()
    lab = scale_lab(std=1.0, factor=True, revealed=True)
    runs = [r for r in study["runs"] if r["std"] == 1.0 and r["factor"]]
    assert lab.stored is not None and lab.stored.held_out == tuple(r["held_out"] for r in runs)
    shown = text(lab.runs.value)
    assert " · ".join(str(r["held_out"]) for r in runs) in shown
    assert "wt-bar-on" in lab.runs.value and 'data-label="std 1, × √d_model"' in lab.runs.value
    assert "std 8, no factor" in text(lab.verdict.value)  # the twin with the same starting ratio
    lab.std.value = 0.25
    assert lab.stored is None and "No runs are stored" in text(lab.verdict.value)


def test_scale_study_data_file_is_complete_and_consistent():
    study = json.loads(scale_study.DATA_FILE.read_text())
    assert study["epochs"] == 60 and len(study["seeds"]) >= 3
    keys = {(r["std"], r["factor"], r["seed"]) for r in study["runs"]}
    for s in scale_study.SETTINGS:
        for seed in study["seeds"]:
            assert (s.std, s.factor, seed) in keys, (s.label, seed)
    for r in study["runs"]:
        assert math.isclose(r["position_length"], math.sqrt(32), rel_tol=1e-4)
        want = scale_study.expected_token_length(r["std"], r["factor"])
        assert abs(r["token_length"] / want - 1) < 0.1, r
        assert math.isclose(r["ratio"], r["token_length"] / r["position_length"], rel_tol=1e-3, abs_tol=1e-4)
        assert 0 <= r["held_out"] <= r["held_out_total"] == 100


def test_scale_study_supports_what_notebook_02_says():
    """Notebook 02 says: the factor itself does not matter, the starting ratio does; too long a
    token row (ratio ≈ 11) costs a quarter of the held-out numbers. These are the stored runs."""
    by_ratio: dict[int, list] = {}
    for s in scale_study.summarize():
        by_ratio.setdefault(round(math.log(s.ratio), 0), []).append(s)
    pairs = [group for group in by_ratio.values() if len(group) == 2]
    assert len(pairs) == 3
    for a, b in pairs:
        assert a.setting.factor != b.setting.factor
        assert abs(a.mean_accuracy - b.mean_accuracy) <= 0.1, (a, b)
    for s in scale_study.summarize():
        if s.ratio > 5:
            assert s.mean_accuracy < 0.9, s
        elif 0.1 < s.ratio < 2:
            assert s.mean_accuracy >= 0.99, s


def test_scale_study_lengths_without_training():
    rows = scale_study.token_lengths(1 / 8, True)
    assert rows.shape == (42,) and 7 < rows.mean() < 9
    assert math.isclose(scale_study.expected_token_length(1.0, True), 64.0)
    assert scale_study.std_label(1 / 8) == "1/8" and scale_study.std_label(1.0) == "1"
    with pytest.raises(ValueError, match="positive"):
        scale_study.token_lengths(0, True)
    assert "| std 1/8, × √d_model |" in scale_study.table()


# ------------------------------------------------------------------------------------------ HTML helpers
def test_html_heatmap_writes_every_value_and_marks_masked_ones():
    a = np.array([[0.5, -np.inf], [-1.25, 2.0]])
    out = _html.heatmap(a, row_labels=["x", "y"], col_labels=["p", "q"], row_title="L", col_title="d")
    assert 'data-shape="2x2"' in out and text(out).count("−∞") == 1
    assert "−1.25" in text(out) and "0.50" in text(out)
    np.testing.assert_array_equal(cell_values(out), a.reshape(-1))
    wide = np.arange(10.0).reshape(2, 5)
    split = _html.heatmap(wide, max_cols=3)
    assert split.count("<table") == 2 and 'data-cols="3-4"' in split
    np.testing.assert_array_equal(cell_values(split), [0, 1, 2, 5, 6, 7, 3, 4, 8, 9])
    with pytest.raises(ValueError, match="2-D slice"):
        _html.heatmap(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="labels do not fit"):
        _html.heatmap(np.zeros((2, 3)), row_labels=["a"])


def test_html_bars_shape_label_and_table():
    bars = _html.bar_chart([("a", 1), ("b", 3)], highlight="b", show_share=True)
    assert "75.0 %" in text(bars) and bars.count("wt-bar-on") == 1
    with pytest.raises(ValueError):
        _html.bar_chart([("a", -1)])
    label = _html.shape_label((3, 6), ("L", "d_model"))
    assert text(label) == "(L 3, d_model 6)" and label.count("wt-axis") == 2
    assert _html.shape_text((64, 8, 42), ("B", "L", "V")) == "(B 64, L 8, V 42)"
    with pytest.raises(ValueError, match="axes"):
        _html.shape_label((3, 6), ("L",))
    assert "<eos>" not in _html.table(["t"], [["<eos>"]]) and "&lt;eos&gt;" in _html.table(["t"], [["<eos>"]])
    assert _html.number(-1e9) == "−∞" and _html.number(-0.001) == "0.00"


# ------------------------------------------------------------------------------------------ answer checks
RIGHT = {
    "tokens_905": 8,
    "logits_shape": (64, 8, 42),
    "heads_4_to_8": "C",
    "ffn_params": 16576,
    "attention_scores_shape": (64, 4, 8, 8),
    "std1_no_factor": "A",
}


@pytest.mark.parametrize("qid", sorted(RIGHT))
def test_checks_right_answer_and_every_hint_is_reached_by_its_wrong_answer(qid):
    q = checks.QUESTIONS[qid]
    assert q.feedback(RIGHT[qid]) == (True, "✓ Right.")
    assert q.hints, f"{qid} has no hints"
    for wrong, hint in q.hints.items():
        assert q.feedback(wrong) == (False, "✗ Not yet. " + hint), (qid, wrong)
        assert str(RIGHT[qid]) not in hint, f"the hint for {wrong!r} gives the answer away"


def test_checks_name_the_mistakes_the_issue_lists():
    assert "<eos>" in checks.QUESTIONS["tokens_905"].feedback(7)[1]
    assert "last block's output" in checks.QUESTIONS["logits_shape"].feedback((64, 8, 64))[1]
    assert "biases are missing" in checks.QUESTIONS["ffn_params"].feedback(16384)[1]
    assert "heads axis" in checks.QUESTIONS["attention_scores_shape"].feedback((64, 8, 8))[1]
    assert "64 numbers of std 1" in checks.QUESTIONS["std1_no_factor"].feedback("b")[1]


def test_check_reads_the_notebook_variable(capsys):
    ns = {"check": checks.check}
    exec('ok = check("logits_shape")', ns)
    assert ns["ok"] is False and "No answer yet" in capsys.readouterr().out
    ns["logits_shape"] = (64, 8, 42)
    exec('ok = check("logits_shape")', ns)
    assert ns["ok"] is True and "✓ Right." in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ response time
def _changes(machine, micro, scale):
    """One kind of change per entry: name → action(i). The same list runs here and inside a kernel."""
    heads, stds = machine.heads.options, [v for _, v in scale.std.options]
    return {
        "machine: heads": lambda i: setattr(machine.heads, "value", heads[i % len(heads)]),
        "machine: d_model": lambda i: setattr(machine.d_model, "value", D_MODELS[i % len(D_MODELS)]),
        "machine: part click": lambda i: machine.buttons[["output layer", "block 1"][i % 2]].click(),
        "microscope: next/prev": lambda i: (micro.next if i % 4 < 2 else micro.prev).click(),
        "microscope: step slider": lambda i: setattr(micro.step, "value", (7 * i) % (micro.step.max + 1)),
        "microscope: new prompt": lambda i: setattr(micro.prompt, "value", f"{100 + i} ="),
        "scale: std": lambda i: setattr(scale.std, "value", stds[i % len(stds)]),
        "scale: factor": lambda i: setattr(scale.factor, "value", i % 2 == 0),
    }


def test_each_change_runs_and_its_time_is_recorded(tiny, record_property):
    """Every change of the three labs runs again and again, and its median time is measured and recorded; how long
    it may take is make bench's (its labs group), on a quiet machine, not a test's."""
    changes = _changes(machine_lab(), microscope_lab(model=tiny), scale_lab())
    medians = {name: median_ms(action) for name, action in changes.items()}
    for name, ms in medians.items():
        record_property(name, f"{ms:.2f} ms")
    print("median ms per change (no kernel):", {k: round(v, 2) for k, v in medians.items()})
    assert len(medians) == 8 and all(ms > 0 for ms in medians.values()), medians


KERNEL_TIMING = """
import json, statistics, time
from IPython.display import display
from whole_transformer.labs import machine_lab, microscope_lab, scale_lab
import tests.test_labs_01_02 as t
labs = machine_lab(), microscope_lab(), scale_lab()
for lab in labs:
    display(lab)
print(json.dumps({name: t.median_ms(action) for name, action in t._changes(*labs).items()}))
"""


@pytest.mark.package
def test_each_change_runs_and_its_time_is_recorded_inside_a_kernel(record_property):
    """The same changes in a real kernel, where every change also sends the new widget state to the page."""
    import os

    import nbformat
    from nbclient import NotebookClient

    repo = str(Path(__file__).resolve().parents[1])
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(KERNEL_TIMING)])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p))
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": repo}}).execute(env=env)
    out = [o for o in nb.cells[0].outputs if o.output_type == "stream" and o.text.startswith("{")]
    assert out, nb.cells[0].outputs
    medians = json.loads(out[-1].text)
    for name, ms in medians.items():
        record_property(f"kernel {name}", f"{ms:.2f} ms")
    print("median ms per change (in a kernel):", {k: round(v, 2) for k, v in medians.items()})
    assert len(medians) == 8 and all(ms > 0 for ms in medians.values()), medians


def test_microscope_numbers_blocks_and_heads_from_1_as_notebooks_01_and_03_do(tiny):
    lab = microscope_lab(model=tiny)
    shown = []
    for i in range(len(lab.stages)):
        lab.step.value = i
        shown.append(text(lab.title.value) + " " + text(lab.heatmap.value))
    inside = [s for s, stage in zip(shown, lab.stages, strict=True) if stage.block is not None]
    assert inside and all("in block 1" in s for s in inside)
    assert not any("block 0" in s or "head 0" in s for s in shown)


def test_microscope_can_open_at_its_last_step(tiny):
    lab = microscope_lab(model=tiny, step=-1)
    assert lab.step.value == lab.step.max == len(lab.stages) - 1 and lab.current.name == "next word"
    assert lab.next.disabled and not lab.prev.disabled
    with pytest.raises(ValueError, match="counted from the end"):
        microscope_lab(model=tiny, step=len(lab.stages))


# ------------------------------------------------------------------------------- your code under the microscope
def _reference_functions():
    from whole_transformer.course.answers import reference as ref

    return {n: getattr(ref, n) for n in ("layer_norm", "multi_head_attention", "decoder_block", "forward")}


def test_your_code_under_the_microscope_agrees_everywhere_when_right():
    from whole_transformer.labs import _compare
    from whole_transformer.labs.microscope import MicroscopeLab

    lab = MicroscopeLab("8 9 =", step=-1, yours=_reference_functions())
    assert _compare.first_difference(lab.compared) is None
    made = [c for c in lab.compared.values() if c.array is not None]
    assert {c.label for c in made} >= {"block 1 · LayerNorm 1", "block 1 · attention out", "logits"}
    assert all(not c.differs and c.largest < 1e-12 for c in made)
    lab.whose.value = "yours"
    lab.step.value = [s.label for s in lab.stages].index("logits")
    assert "= same as the course&#x27;s" in lab.mine.value and "≠" not in lab.table.value
    assert "every step your functions make agrees" in lab.table.value


@pytest.mark.parametrize(
    "planted, step",
    [
        ("layer_norm", "block 1 · LayerNorm 1"),  # the variance over d - 1
        ("multi_head_attention", "block 1 · attention out"),  # the output bias forgotten
        ("forward", "logits"),  # no final LayerNorm
    ],
)
def test_a_planted_mistake_is_named_at_its_first_step(planted, step):
    from whole_transformer.course.answers.mistakes import CATALOGUE
    from whole_transformer.labs import _compare
    from whole_transformer.labs.microscope import MicroscopeLab

    mistake = {"layer_norm": "variance_n_minus_1", "multi_head_attention": "no_output_bias"}.get(
        planted, "no_final_layer_norm"
    )
    yours = {**_reference_functions(), planted: next(m for m in CATALOGUE[planted] if m.id == mistake).code}
    lab = MicroscopeLab("8 9 =", step=0, yours=yours)
    first = _compare.first_difference(lab.compared)
    assert first is not None and first.label == step and first.largest > 1e-3
    lab.whose.value = "yours"
    lab.step.value = [s.label for s in lab.stages].index(step)
    assert "≠ first difference, largest difference" in lab.mine.value  # in words, not colour alone
    assert f"the first step that differs is {step}" in lab.table.value
    lab.whose.value = "course"
    assert lab.mine.value == ""


def test_your_code_not_written_yet_is_said_not_raised():
    from whole_transformer.labs.microscope import MicroscopeLab

    def layer_norm(x, gamma, beta, eps=1e-5):
        raise NotImplementedError()

    lab = MicroscopeLab("8 9 =", step=0, yours={"layer_norm": layer_norm})
    lab.whose.value = "yours"
    assert "your layer_norm is not written yet" in lab.table.value
    assert "no forward defined yet" in lab.table.value or "forward" not in lab.table.value
