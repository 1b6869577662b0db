"""The forward pass in NumPy that students write (the course's reference, instructor-only), and the steps the
microscope shows, caught from the torch model by forward hooks (``steps.trace``): both equal the torch model."""

import numpy as np
import pytest
import torch

from whole_transformer import steps as nm
from whole_transformer.course.answers import reference as ref
from whole_transformer.model import ModelConfig, Transformer
from whole_transformer.task import PAD, TOKEN_ID, prompt, sequence
from whole_transformer.weights import weights_of

ALL_SEQUENCES = [sequence(n) for n in range(1000)]


def _torch_logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids]))[0].double().numpy()


def _reference(model, ids):
    return ref.forward(np.asarray(ids), weights_of(model), model.cfg.n_heads, model.cfg.pad_id)


@pytest.mark.parametrize("name", ["60", "2", "microscope"])
def test_twin_equals_torch_on_the_shipped_checkpoints(shipped, name):
    model = shipped[name]
    exact = nm.exact_copy(model)  # the same weights and position rows, computed in float64 like the reference
    worst_exact = worst_f32 = scale = 0.0
    for ids in ALL_SEQUENCES:
        twin = _reference(model, ids)
        f32 = _torch_logits(model, ids)
        worst_exact = max(worst_exact, float(np.abs(twin - _torch_logits(exact, ids)).max()))
        worst_f32 = max(worst_f32, float(np.abs(twin - f32).max()))
        scale = max(scale, float(np.abs(f32).max()))
    assert worst_exact < 1e-12  # the same computation
    # against the float32 model what is left is float32 rounding, which grows with the logits' size
    assert worst_f32 <= 1e-5 * max(1.0, scale), (worst_f32, scale)


def test_twin_argmax_equals_torch_argmax_everywhere(shipped):
    for model in shipped.values():
        for ids in ALL_SEQUENCES[::7]:
            assert (_reference(model, ids).argmax(-1) == _torch_logits(model, ids).argmax(-1)).all()


def test_every_intermediate_equals_torch(model60):
    exact = nm.exact_copy(model60)
    seen = {}

    def keep(name):
        def hook(module, inputs, output):
            seen[name] = (output[0] if isinstance(output, tuple) else output)[0].detach().numpy()

        return hook

    for b, block in enumerate(exact.blocks):
        block.ln1.register_forward_hook(keep(("LayerNorm 1", b)))
        block.attn.register_forward_hook(keep(("attention out", b)))
        block.ln2.register_forward_hook(keep(("LayerNorm 2", b)))
        block.ffn.up.register_forward_hook(keep(("FFN hidden", b)))
        block.ffn.register_forward_hook(keep(("FFN out", b)))
        block.register_forward_hook(keep(("residual 2", b)))
    exact.ln_f.register_forward_hook(keep(("final LayerNorm", None)))
    ids = sequence(896)
    with torch.no_grad():
        logits, attention = exact(torch.tensor([ids]), return_attention=True)
    steps = nm.trace(model60, ids)
    for (name, block), array in seen.items():
        assert np.allclose(nm.find(steps, name, block).array, array, atol=1e-9), (name, block)
    for b, w in enumerate(attention):
        assert np.allclose(nm.find(steps, "weights", b).array, w[0].numpy(), atol=1e-9)
    assert np.allclose(nm.find(steps, "logits").array, logits[0].numpy(), atol=1e-9)
    with torch.no_grad():
        embedded = exact.embed(torch.tensor([ids]))[0].numpy()
    assert np.allclose(nm.find(steps, "+ positions").array, embedded, atol=1e-9)
    assert np.allclose(nm.find(steps, "logits").array, _reference(model60, ids), atol=1e-12)


def test_names_axes_and_blocks(model60):
    ids = sequence(427)  # 9 tokens
    steps = nm.trace(model60, ids)
    expected = list(nm.BEFORE) + [n for _ in range(2) for n in nm.BLOCK_NAMES] + list(nm.AFTER)
    assert [s.name for s in steps] == expected
    assert [s.block for s in steps] == [None] * 3 + [b for b in range(2) for _ in nm.BLOCK_NAMES] + [None] * 2
    sizes = {"L": 9, "L_q": 9, "L_k": 9, "d_model": 64, "h": 4, "d_k": 16, "d_ff": 128, "V": 42}
    for s in steps:
        assert isinstance(s.array, np.ndarray)
        assert s.array.shape == tuple(sizes[a] for a in s.axes), s
        assert s.formula
    assert nm.find(steps, "scores", 1).axes == ("h", "L_q", "L_k")
    assert nm.find(steps, "Q", 0).axes == ("h", "L", "d_k")
    assert nm.find(steps, "logits").label == "logits"
    assert nm.find(steps, "weights", 1).label == "block 2 · weights"  # labels count blocks from 1, as 01 and 03 do
    assert "weights" in repr(nm.find(steps, "weights", 1)) and "L_q=9" in repr(nm.find(steps, "weights", 1))


def test_microscope_reading_8_9_equals(microscope):
    steps = nm.trace(microscope, prompt(89))
    assert len(steps) == 3 + 15 + 2
    shapes = {s.name: s.array.shape for s in steps}
    assert shapes["token rows"] == (3, 6)
    assert shapes["Q"] == (1, 3, 6)
    assert shapes["weights"] == (1, 3, 3)
    assert shapes["FFN hidden"] == (3, 12)
    assert shapes["logits"] == (3, 42)
    assert int(nm.find(steps, "logits").array[-1].argmax()) == TOKEN_ID["eighty"]


def test_scaled_is_times_sqrt_d_model(model60):
    steps = nm.trace(model60, prompt(7))
    assert np.allclose(nm.find(steps, "scaled").array, nm.find(steps, "token rows").array * 8)


def test_masked_scores_and_weights(model60):
    steps = nm.trace(model60, sequence(42))  # 4 2 = forty two <eos>
    masked = nm.find(steps, "masked scores", 0).array
    weights = nm.find(steps, "weights", 0).array
    upper = np.triu(np.ones((6, 6), dtype=bool), k=1)
    assert np.isneginf(masked[:, upper]).all() and np.isfinite(masked[:, ~upper]).all()
    assert (weights[:, upper] == 0).all()
    assert np.allclose(weights.sum(-1), 1)
    relu = nm.find(steps, "ReLU", 1).array
    assert (relu >= 0).all() and np.array_equal(relu, np.maximum(nm.find(steps, "FFN hidden", 1).array, 0))


def test_pad_keys_are_masked_like_torch(model60):
    ids = prompt(5) + [PAD, PAD]
    steps = nm.trace(model60, ids)
    assert (nm.find(steps, "weights", 0).array[:, :, 2:] == 0).all()
    assert np.allclose(_reference(model60, ids), _torch_logits(model60, ids), atol=1e-4)


@pytest.mark.parametrize(
    "cfg",
    [
        ModelConfig(causal=False),
        ModelConfig(scale_embedding=False),
        ModelConfig(d_model=12, n_heads=3, n_layers=3, d_ff=5),
    ],
)
def test_twin_follows_the_ablation_switches(cfg):
    torch.manual_seed(3)
    model = Transformer(cfg).eval()
    for n in (0, 58, 427):
        assert np.allclose(
            nm.find(nm.trace(model, sequence(n)), "logits").array, _torch_logits(model, sequence(n)), atol=1e-5
        )


def test_the_reference_reads_a_padded_batch_as_each_sequence_alone(model60):
    seqs = [sequence(n)[:-1] for n in (5, 427, 73)]
    L = max(map(len, seqs))
    batch = np.array([s + [PAD] * (L - len(s)) for s in seqs])
    out = _reference(model60, batch)
    assert out.shape == (3, 8, 42)
    for row, s in zip(out, seqs, strict=True):
        assert np.allclose(row[: len(s)], _reference(model60, s), atol=1e-12)


def test_no_numpy_forward_pass_in_the_student_package():
    """The student's side holds no LayerNorm, attention, block or forward pass in NumPy: the microscope's steps
    come from the torch model (issue 41)."""
    import pathlib

    import whole_transformer

    pkg = pathlib.Path(whole_transformer.__file__).parent
    assert not (pkg / "numpy_model.py").exists()
    for path in pkg.rglob("*.py"):
        if "course" in path.relative_to(pkg).parts:
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("def layer_norm", "def _layer_norm", "def multi_head_attention", "def decoder_block"):
            assert needle not in text, (path, needle)
        assert "np.sqrt(var" not in text and "np.tri(" not in text, path


@pytest.mark.parametrize(
    "ids, message",
    [
        ([[6, 4, 12]], "trace reads ONE sequence"),
        ([], "the sequence is empty"),
        ([6, 42], r"unknown token ids \[42\]"),
        ([6, -1], r"unknown token ids \[-1\]"),
        ([6.0, 4.0], "token ids must be whole numbers"),
        ([True, False], "token ids must be whole numbers"),
        ([6] * 17, "more than the model's max_len=16"),
    ],
)
def test_bad_ids_raise(model60, ids, message):
    with pytest.raises(ValueError, match=message):
        nm.trace(model60, ids)


def test_find_explains_what_is_wrong(model60):
    steps = nm.trace(model60, prompt(3))
    with pytest.raises(ValueError, match="no step is called 'attention'"):
        nm.find(steps, "attention", 0)
    with pytest.raises(ValueError, match="happens inside every block: say which"):
        nm.find(steps, "weights")
    with pytest.raises(ValueError, match=r"no 'weights' in block 5: this model has blocks \[0, 1\]"):
        nm.find(steps, "weights", 5)
