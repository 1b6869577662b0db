"""Ask first, then show: the released notebooks, run top to bottom as a student's Run All does.

- no question's answer appears, as text, in what the cells above its answer cell show (printed lines,
  HTML, Markdown, and the last state of every lab); where the notebook does show the answer, it is
  below the question;
- nor in the Markdown above it (the question's own cell aside, which holds its options) or in any hint a
  student can meet before answering it (the hints of the questions above, and its own), for every
  answer that is a number, a shape or an option's key phrase (KEY_PHRASES);
- a check cell shows its printed line and nothing else (no ``Out[n]: True``);
- notebook 02 draws the scale study as a table, not as Markdown source with pipes;
- in notebook 04 each training lab shows its own run, and no printed line repeats (and goes stale
  beside) a lab's status.

The notebooks run from release/ (what students get, rebuilt by ``make release``; another test fails
when it is stale), once per notebook, with the widgets' state kept.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from notebook_helpers import REPO, execute, output_text, stream_text, widget_text

from whole_transformer.course.cells import nbgrader_meta as nbg
from whole_transformer.course.layout import ASSIGNMENT

RELEASE = REPO / "release" / ASSIGNMENT
NOTEBOOKS = ["01-whole-machine.ipynb", "02-microscope.ipynb", "03-one-word-at-a-time.ipynb", "04-how-it-learned.ipynb"]

# What would give each answer away if it were shown above the question, as regexes over the text a
# reader sees. Each is a form the course's outputs really use (or the plain form of the answer).
GIVEAWAYS = {
    "tokens_905": [r"9 0 5 = nine hundred five <eos>", r"905\D{0,20}\b8 tokens"],
    "logits_shape": [r"\(64, 8, 42\)", r"B 64 ?, L 8 ?, (V|n_vocab) 42", r"64 × 8 × 42"],
    "heads_4_to_8": [r"with 8 heads", r"heads 4 → 8"],
    "ffn_params": [r"16,576", r"\b16576\b"],
    "attention_scores_shape": [r"\(64, 4, 8, 8\)", r"B 64 ?, h 4 ?, L_q 8 ?, L_k 8"],
    "std1_no_factor": [
        r"std 1, no factor[^.]{0,80}held out 100, 100, 100",
        r"std 1, no factor \S+ \S+ 100 · 100 · 100",
        r"std 1, no factor \| [^\n]*100, 100, 100",
    ],
    "changes_during_inference": [r"attention scores change", r"no weight changes"],
    "rows_742": [r"7 4 2 = seven hundred forty", r"\b7 rows (go )?in\b"],
    "cached_rows_742": [r"\b8 rows (go )?through the blocks", r"with the cache[^.]{0,40}\b8 rows"],
    "sampling_742": [
        r"20 of 20 readings of 742 are right with temperature 0\.3",
        r"temperature 0\.3[^.]{0,60}most often",
    ],
    "maps_hundred_427": [r"query 'hundred' \(row \d\), the row that picks 'twenty', gives the key '2'"],
    "counted_427": [r"5 of 8 targets count"],
    "flat_shape": [r"\(320, 42\)"],
    "no_causal_mask": [r"no causal mask, (seed \d+, )?(after|epoch) \d+"],
    "learns_nothing": [r"copy task, (seed \d+, )?(after|epoch) \d+"],
}
# The key phrase of each right answer, as prose could state it before the question is asked (read over the
# Markdown above a question and the hints a student meets before answering it).
KEY_PHRASES = {
    "tokens_905": [r"\b8 tokens\b", r"905[^.]{0,40}\beight tokens"],
    "logits_shape": [r"\(64, 8, 42\)", r"64 × 8 × 42"],
    "heads_4_to_8": [
        r"(count|total|number of parameters)[^.]{0,30}(stays|is|remains) (exactly )?the same",
        r"heads change no count",
        r"heads? (appear|appears) nowhere",
        r"not one parameter",
    ],
    "ffn_params": [r"16,576", r"\b16576\b"],
    "attention_scores_shape": [r"\(64, 4, 8, 8\)", r"B 64 ?, h 4 ?, L_q 8 ?, L_k 8"],
    "std1_no_factor": [
        r"std 1 (and )?(with)?out the factor[^.]{0,80}(100 of 100|all (of them|three))",
        r"std 1 without the factor starts like the course's model",
    ],
    "changes_during_inference": [
        r"attention scores (and weights )?(change|are computed again)",
        r"computed again: Q, K and V",
        r"every weight is only read",
        r"no weight changes",
        r"none is written",
        r"no loss, no backward pass",
    ],
    "rows_742": [r"\b7 rows\b", r"seven rows"],
    "sampling_742": [
        r"lower (the )?temperature[^.]{0,80}(right|correct) (most|more) often",
        r"(lowest|coldest) temperature[^.]{0,60}(right|best)",
        r"temperature 0\.3[^.]{0,60}(most often|every time|20 of 20)",
        r"as .?T.? goes towards 0, sampling becomes greedy",
    ],
    "cached_rows_742": [
        r"\b8 rows\b",
        r"eight rows",
        r"(each|every) token (goes|passes) through the blocks (exactly )?once",
        r"4 \+ 1 \+ 1 \+ 1 \+ 1",
        r"only the newest token goes through the blocks",
        r"a step puts only the newest token through the blocks",
        r"every later step reads one row",
        r"first step has no cache yet, so it reads the whole prompt",
    ],
    "maps_hundred_427": [
        r"row of .?hundred.?[^.]{0,60}(looks|weight)[^.]{0,30} (on|at) (the )?.?2\b",
        r"while it picks .?twenty.?[^.]{0,40}\bon the .?2\b",
    ],
    "counted_427": [r"5 of (the )?8 targets", r"\bfive of (the )?(8|eight)"],
    "flat_shape": [r"\(320, 42\)", r"\b320 rows\b"],
    "no_causal_mask": [
        r"loss (would )?drops? to zero",
        r"the very token it (must|has to) guess",
        r"exactly the token it is asked to predict",
        r"copy from one step ahead",
        r"loss falls (fast|faster)",
    ],
    "learns_nothing": [r"copy task (is )?the first thing", r"first thing to try", r"try the copy task first"],
}
# The answers a notebook does show, below the question: the forms above are what its outputs really say.
SHOWN_BELOW = {
    "logits_shape",
    "heads_4_to_8",
    "ffn_params",
    "std1_no_factor",
    "counted_427",
    "flat_shape",
    "no_causal_mask",
    "learns_nothing",
}
TRAINING_RUNS = {
    "main": "the course's model",
    "no_mask": "no causal mask",
    "std1": "token table std 1",
    "copy": "copy task",
}


@pytest.fixture(scope="module")
def released():
    """name → the release notebook after Run All (errors allowed: the unanswered stubs raise)."""
    runs = {}

    def run(name):
        if name not in runs:
            nb = nbformat.read(RELEASE / name, as_version=4)
            execute(nb, allow_errors=True, store_widget_state=True)
            runs[name] = nb
        return runs[name]

    return run


def questions(nb):
    """(index of the answer cell, question id) for every question of the notebook, in order."""
    return [
        (i, nbg(c)["grade_id"])
        for i, c in enumerate(nb.cells)
        if nbg(c).get("grade_id") in GIVEAWAYS and nbg(c).get("solution")
    ]


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_answer_is_shown_above_its_question(released, name):
    nb = released(name)
    texts = [output_text(nb, c) if c.cell_type == "code" else "" for c in nb.cells]
    asked = questions(nb)
    assert asked, f"{name} has no questions"
    for index, qid in asked:
        above, below = " ".join(texts[:index]), " ".join(texts[index:])
        for form in GIVEAWAYS[qid]:
            hit = re.search(form, above)
            assert not hit, f"{name}: the answer to {qid} is shown above the question: …{hit.group(0)}…"
        if qid in SHOWN_BELOW:
            assert any(re.search(form, below) for form in GIVEAWAYS[qid]), (
                f"{name}: nothing below {qid} shows its answer in the forms the test looks for; "
                "the forms no longer match what the notebook shows"
            )


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_check_cell_shows_its_line_and_no_out_value(released, name):
    nb = released(name)
    cells = [c for c in nb.cells if c.cell_type == "code" and c.source.strip().startswith("check(")]
    assert cells
    for c in cells:
        kinds = [o.output_type for o in c.outputs]
        assert "execute_result" not in kinds, f"{name}: {c.source.strip()} shows {c.outputs}"
        assert stream_text(c).strip(), f"{name}: {c.source.strip()} printed nothing"


@pytest.mark.slow
def test_02_draws_the_scale_study_as_a_table(released):
    nb = released("02-microscope.ipynb")
    cell = next(c for c in nb.cells if c.cell_type == "code" and "scale_study.table()" in c.source)
    assert not stream_text(cell), "the table is printed as Markdown source"
    (shown,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert "text/markdown" in shown.data and shown.data["text/markdown"].startswith("| setting |")


@pytest.mark.slow
def test_04_each_training_lab_shows_its_own_run(released):
    nb = released("04-how-it-learned.ipynb")
    cells = [c for c in nb.cells if c.cell_type == "code" and "training_lab(" in c.source]
    assert len(cells) == len(TRAINING_RUNS), [c.source for c in cells]
    for c, (key, label) in zip(cells, TRAINING_RUNS.items(), strict=True):
        assert f'"{key}"' in c.source or key == "main", c.source
        shown = widget_text(nb, c)
        assert re.search(rf"{re.escape(label)}, seed \d+, after \d+ epochs", shown), (label, shown[:300])
        for other_key, other in TRAINING_RUNS.items():
            if other_key != key:
                assert not re.search(rf"{re.escape(other)}, seed \d+, after", shown), f"the {label} lab shows {other}"
        assert not stream_text(c).strip(), f"a printed line beside the {label} lab goes stale: {stream_text(c)!r}"


def _hints(qid):
    from whole_transformer.questions import QUESTIONS

    q = QUESTIONS[qid]
    return [*q.hints.values(), q.fallback]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_markdown_or_hint_above_a_question_states_its_answer(name):
    """The source notebook's Markdown above each question (its own cell aside) and every hint met before."""
    from notebook_helpers import load

    nb = load(name)
    asked = questions(nb)
    assert asked
    before = []  # question ids asked above, in this notebook
    for index, qid in asked:
        own = max(i for i in range(index) if nb.cells[i].cell_type == "markdown")
        markdown = [c.source for c in nb.cells[:own] if c.cell_type == "markdown"]
        hints = [h for q in [*before, qid] for h in _hints(q)]
        for where, texts in (("the Markdown above", markdown), ("a hint met before answering", hints)):
            text = " ".join(" ".join(texts).split())
            for form in KEY_PHRASES[qid] + GIVEAWAYS[qid]:
                hit = re.search(form, text, re.I)
                assert not hit, f"{name}: {where} {qid} gives its answer away: …{hit.group(0)}…"
        before.append(qid)


def test_the_key_phrases_do_find_the_answers_where_they_are_given():
    """Each question's phrases are real: the text after the question (or the answer itself) matches one."""
    from notebook_helpers import load

    found = set()
    for name in NOTEBOOKS:
        nb = load(name)
        for index, qid in questions(nb):
            after = " ".join(" ".join(c.source for c in nb.cells[index:]).split())
            if any(re.search(f, after, re.I) for f in KEY_PHRASES[qid]):
                found.add(qid)
    assert found >= {
        "heads_4_to_8",
        "ffn_params",
        "changes_during_inference",
        "no_causal_mask",
        "std1_no_factor",
        "learns_nothing",
        "logits_shape",
        "attention_scores_shape",
        "cached_rows_742",
        "sampling_742",
    }, found
