"""Your model is yours: the runs a student trains and keeps in 04's training lab are the ones 03's labs offer.

The training lab trains the run the student chooses (the course's model or an ablation: no causal mask, token table
std 1, no × √d_model, the copy task), from the seed they choose, for the epochs they choose. *Keep this run* saves it
under a name of theirs, with its settings and history, in ``your-models/``; a name already kept is never written
over unless they say so. Every lab with a model chooser (the decode lab, the attention maps, the cache lab, the
sampling lab, the held-out table) offers each kept run by its name and settings, in a fresh kernel too, and reads
with it: its readings and its maps are its own, not the shipped model's. Without a kept run the choosers offer the
shipped models only and say how to keep one; a broken file is named.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from whole_transformer import task
from whole_transformer.decode import greedy_trace
from whole_transformer.envflags import YOUR_MODEL_DIR
from whole_transformer.labs import _decode, _yours, attention_maps_lab, cache_lab, decode_lab, training_lab
from whole_transformer.labs.heldout import held_out_table
from whole_transformer.labs.sampling import sampling_lab
from whole_transformer.train import load_checkpoint


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """An empty folder where the student's runs are kept and looked for; not under autograding."""
    monkeypatch.setenv(YOUR_MODEL_DIR, str(tmp_path))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return tmp_path


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_without_a_kept_run_the_labs_say_how_to_keep_one(folder):
    assert dict(_decode.CHECKPOINTS) == _decode.SHIPPED
    assert "train one in notebook 04" in held_out_table([14])._repr_html_()
    lab = decode_lab()
    assert [k for _, k in lab.checkpoint.options] == ["60", "2"]
    assert "Keep this run" in lab.yours.value
    for ask in (lambda: decode_lab(checkpoint="yours"), lambda: _decode.model_for("yours")):
        with pytest.raises(ValueError, match="No model of your own yet: train one in notebook 04"):
            ask()
    with pytest.raises(ValueError, match="No model of your own yet"):
        attention_maps_lab(checkpoint="yours:nothing-here")


def test_training_keeps_nothing_until_asked_and_then_keeps_the_run_with_its_settings(folder):
    lab = training_lab()
    with pytest.raises(ValueError, match="nothing to keep yet: press Train first"):
        lab.keep("too-soon")
    run = lab.train("no_mask", epochs=2, seed=5)
    assert not (folder / _yours.FOLDER).exists(), "a run is kept only when the student keeps it"
    assert lab.keep_name.value == "no-mask-seed-5-2-epochs" and not lab.keep_button.disabled
    assert lab.keep() == "no-mask-seed-5-2-epochs"
    kept = folder / _yours.FOLDER / "no-mask-seed-5-2-epochs.pt"
    assert kept.is_file() and "Kept as" in lab.message
    model, meta = load_checkpoint(str(kept))
    assert same_weights(model, run.model)
    assert meta["run"] == "no_mask" and meta["train_config"]["seed"] == 5 and meta["epochs_trained"] == 2
    assert meta["model_config"]["causal"] is False and len(meta["history"]) == 2
    assert meta["history"][-1]["loss"] == run.history[-1].loss
    label = "no-mask-seed-5-2-epochs (no causal mask, seed 5, 2 epochs)"
    assert _decode.CHECKPOINTS["yours:no-mask-seed-5-2-epochs"] == label


def test_a_kept_name_is_never_written_over_unless_the_student_says_so(folder):
    lab = training_lab()
    first = lab.train("main", epochs=1, seed=1)
    lab.keep("mine")
    lab.train("main", epochs=1, seed=2)
    assert lab.suggested_name() == "main-seed-2-1-epochs"
    with pytest.raises(ValueError, match="a run is already kept as 'mine'.*type another name, or tick replace"):
        lab.keep("mine")
    assert same_weights(_decode.model_for("yours:mine"), first.model), "the kept run is still the first"
    lab.keep_name.value = "mine"
    lab._keep_clicked()  # the button says why in the status line, no traceback
    assert "already kept as 'mine'" in lab.message
    lab.replace.value = True
    lab._keep_clicked()
    assert "Kept as" in lab.message and not lab.replace.value, "replace is a one-time yes"
    assert _decode.CHECKPOINTS["yours:mine"] == "mine (the course's model, seed 2, 1 epoch)"
    lab.train("main", epochs=1, seed=1)
    lab.keep("main-seed-1-1-epochs")
    lab.train("main", epochs=1, seed=1)
    assert lab.suggested_name() == "main-seed-1-1-epochs-2", "a suggested name is a new one"
    for bad in ("", "../escape", "a/b", "x" * 41, ".hidden"):
        with pytest.raises(ValueError, match="a kept run's name is 1 to 40 letters"):
            lab.keep(bad)


def test_a_broken_kept_file_is_named(folder):
    (folder / _yours.FOLDER).mkdir()
    (folder / _yours.FOLDER / "broken.pt").write_bytes(b"not a model")
    assert "cannot be read" in _decode.CHECKPOINTS["yours:broken"]
    with pytest.raises(ValueError, match="cannot read .*broken.pt as a model"):
        _decode.model_for("yours:broken")


FRESH_KERNEL = textwrap.dedent(
    """
    import json
    import numpy as np
    from whole_transformer import task
    from whole_transformer.labs import _decode, attention_maps_lab, cache_lab, decode_lab
    from whole_transformer.labs.heldout import held_out_table
    from whole_transformer.labs.sampling import sampling_lab

    out = {"options": {}, "reads": {}, "maps": {}}
    for lab in (decode_lab(), attention_maps_lab(), cache_lab(), sampling_lab(742)):
        out["options"][type(lab).__name__] = [list(o) for o in lab.checkpoint.options]
    for key in _decode.CHECKPOINTS:
        out["reads"][key] = decode_lab(number=14, checkpoint=key, finished=True).trace.ids
        out["maps"][key] = attention_maps_lab(427, checkpoint=key).maps.weights.round(6).tolist()
    out["cache"] = [k for _, k in cache_lab().checkpoint.options]
    out["table"] = list(held_out_table([14, 427]).said)
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_runs_kept_with_another_seed_and_without_the_mask_are_offered_in_a_fresh_kernel(folder):
    lab = training_lab()
    seeded = lab.train("main", epochs=2, seed=7)
    lab.keep("seed-7")
    no_mask = lab.train("no_mask", epochs=2, seed=0)
    lab.keep("no-mask")
    env = {**os.environ, YOUR_MODEL_DIR: str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", FRESH_KERNEL], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    labels = {
        "yours:seed-7": "seed-7 (the course's model, seed 7, 2 epochs)",
        "yours:no-mask": "no-mask (no causal mask, seed 0, 2 epochs)",
    }
    for lab_name, options in seen["options"].items():
        offered = {k: v for v, k in options}
        mine = labels if lab_name != "CacheLab" else {"yours:seed-7": labels["yours:seed-7"]}  # a cache needs the mask
        assert {k: offered.get(k) for k in mine} == mine, lab_name
        assert {"60", "2"} <= set(offered), lab_name
    assert "yours:no-mask" not in seen["options"]["CacheLab"]
    assert seen["table"] == ["after 60 epochs", "after 2 epochs", *labels.values()]
    # their readings are theirs: what the kept model writes, not what a shipped one writes
    assert seen["reads"]["yours:seed-7"] == greedy_trace(seeded.model, task.prompt(14)).ids
    assert seen["reads"]["yours:no-mask"] == greedy_trace(no_mask.model, task.prompt(14)).ids
    shipped_2, _ = load_checkpoint("2")  # seed 0, 2 epochs: what seed 7 would be if the seed were ignored
    assert not same_weights(seeded.model, shipped_2)
    # the maps of the prompt's rows (4 2 7 =, the same tokens for every model; the answers differ in length)
    maps = {k: np.array(v)[..., :4, :4] for k, v in seen["maps"].items()}
    for key in labels:
        for shipped in ("60", "2"):
            assert np.abs(maps[key] - maps[shipped]).max() > 0.05, (key, shipped)
    # without the mask a query looks at later keys too: its maps have weight above the diagonal
    upper = np.triu(np.ones((4, 4), dtype=bool), k=1)
    assert maps["yours:no-mask"][..., upper].max() > 0.01
    assert maps["2"][..., upper].max() == 0.0 and maps["yours:seed-7"][..., upper].max() == 0.0


def test_every_chooser_reads_with_the_kept_run_and_names_it_in_its_sentences(folder):
    lab = training_lab()
    run = lab.train("main", epochs=2, seed=3)
    lab.keep("three")
    decode = decode_lab(number=14, checkpoint="yours:three", finished=True)
    assert decode.trace is not None and decode.trace.ids == greedy_trace(run.model, task.prompt(14)).ids
    decode.reset()
    assert "your run “three” (the course's model, seed 3, 2 epochs) reads it" in decode.message
    assert "the model your model" not in decode.message
    assert "three (the course&#x27;s model, seed 3, 2 epochs)" in decode.yours.value  # escaped HTML
    assert decode_lab(checkpoint="yours").checkpoint.value == "yours:three", "'yours' is the run kept last"
    maps = attention_maps_lab(number=427, checkpoint="yours:three")
    assert maps.maps is not None and "Your run “three”" in maps.message
    cache = cache_lab(number=742, checkpoint="yours:three")
    assert ("three (the course's model, seed 3, 2 epochs)", "yours:three") in cache.checkpoint.options
    lab.train("no_mask", epochs=1, seed=0)
    lab.keep("open")
    with pytest.raises(ValueError, match="has no causal mask, and a KV cache needs one"):
        cache_lab(checkpoint="yours:open")
    assert "yours:open" in dict((k, v) for v, k in decode_lab().checkpoint.options)
    sampling = sampling_lab(742, checkpoint="yours:three")
    assert sampling.checkpoint.value == "yours:three"
    table = held_out_table([14, 427])
    assert list(table.said)[:3] == ["after 60 epochs", "after 2 epochs", "three (the course's model, seed 3, 2 epochs)"]


def test_a_chooser_is_wide_enough_for_its_longest_label(folder):
    lab = training_lab()
    lab.train("no_scale", epochs=1, seed=123456)
    lab.keep("a-rather-long-name-for-a-run-of-mine-40c")
    for made in (decode_lab(), attention_maps_lab(), cache_lab()):
        longest = max(len(label) for label, _ in made.checkpoint.options)
        width = int(made.checkpoint.layout.width.removesuffix("px"))
        assert width >= 50 + 7.6 * longest, (type(made).__name__, width, longest)
