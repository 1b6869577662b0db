"""The student's own model: 04's training lab saves it, every lab with a model chooser offers it as "your model".

Without one, the chooser offers the shipped models only and says how to get one; asking for it anyway gives that
advice as the error. A run of the course's model in the training lab saves ``your-model.pt`` (not an ablation, not
under autograding); the chooser then lists it with its epochs, and the decode lab, the attention maps and the
held-out table read numbers with it. The file is read again when it changes, and a broken file gets a clear message.
"""

from __future__ import annotations

import pytest
import torch

from whole_transformer import task
from whole_transformer.decode import greedy_trace
from whole_transformer.envflags import YOUR_MODEL_DIR
from whole_transformer.labs import _decode, _yours, attention_maps_lab, decode_lab, training_lab
from whole_transformer.labs.heldout import held_out_table


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """An empty folder where the student's model is saved and looked for; not under autograding."""
    monkeypatch.setenv(YOUR_MODEL_DIR, str(tmp_path))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return tmp_path


def test_without_a_model_of_your_own_the_labs_say_how_to_get_one(folder):
    assert dict(_decode.CHECKPOINTS) == _decode.SHIPPED
    assert "train one in notebook 04" in held_out_table([14])._repr_html_()
    lab = decode_lab()
    assert [k for _, k in lab.checkpoint.options] == ["60", "2"]
    assert "train one in notebook 04" in lab.yours.value
    for ask in (lambda: decode_lab(checkpoint="yours"), lambda: _decode.model_for("yours")):
        with pytest.raises(ValueError, match="No model of your own yet: train one in notebook 04"):
            ask()
    with pytest.raises(ValueError, match="No model of your own yet"):
        attention_maps_lab(checkpoint="yours")


def test_the_training_lab_saves_your_model_and_every_chooser_offers_it(folder):
    lab = training_lab()
    run = lab.train("main", epochs=2)
    assert (folder / _yours.FILE).is_file() and "Saved as your-model.pt" in lab.message
    assert _decode.CHECKPOINTS["yours"] == "your model (2 epochs)"
    mine = _decode.model_for("yours")
    assert all(
        torch.equal(a, b) for a, b in zip(mine.state_dict().values(), run.model.state_dict().values(), strict=True)
    )
    decode = decode_lab(number=14, checkpoint="yours", finished=True)
    assert ("your model (2 epochs)", "yours") in decode.checkpoint.options
    assert decode.trace is not None and decode.trace.ids == greedy_trace(run.model, task.prompt(14)).ids
    decode.reset()
    assert "the model your model (2 epochs) reads it" in decode.message
    assert "you trained in notebook 04" in decode.yours.value
    maps = attention_maps_lab(number=427, checkpoint="yours")
    assert ("your model (2 epochs)", "yours") in maps.checkpoint.options
    table = held_out_table([14, 427])  # by default every model the chooser offers
    assert list(table.said) == ["after 60 epochs", "after 2 epochs", "your model (2 epochs)"]
    assert table.said["your model (2 epochs)"] == table.said["after 2 epochs"], "the same seed, the same 2 epochs"
    assert "you trained in notebook 04" in table._repr_html_()


def test_a_retrained_model_is_read_again_and_a_broken_file_is_named(folder):
    training_lab().train("main", epochs=1)
    first = _decode.model_for("yours")
    training_lab().train("main", epochs=2)
    assert _decode.CHECKPOINTS["yours"] == "your model (2 epochs)"
    assert _decode.model_for("yours") is not first
    (folder / _yours.FILE).write_bytes(b"not a model")
    with pytest.raises(ValueError, match="cannot read .*your-model.pt as a model"):
        _decode.model_for("yours")


def test_ablations_and_autograding_leave_your_model_alone(folder, monkeypatch):
    lab = training_lab()
    lab.train("no_mask", epochs=1)
    assert not (folder / _yours.FILE).exists() and "Saved" not in lab.message
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    lab.train("main", epochs=5)
    assert not (folder / _yours.FILE).exists(), "a run cut short by the grader replaced the student's model"
