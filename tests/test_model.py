"""The torch model: parameter table, shapes, masks, the fast paths, bad configs."""

import math
import random
import re

import pytest
import torch
import torch.nn.functional as F

from whole_transformer.fast import cache_rows, extend, logits_at, single_thread
from whole_transformer.model import (
    ModelConfig,
    Transformer,
    count_parameters,
    parameter_counts,
    parameter_table,
    sinusoidal_positions,
    softmax_rows,
)
from whole_transformer.task import PAD, make_batch, prompt, sequence

DEFAULT_TABLE = {
    "token table": 2688,
    "positions": 0,
    "one attention": 16448,
    "one FFN": 16576,
    "one LayerNorm": 128,
    "one block": 33280,
    "2 blocks": 66560,
    "final LayerNorm": 128,
    "output layer": 2730,
    "total": 72106,
}


def _model(seed=0, **cfg):
    torch.manual_seed(seed)
    return Transformer(ModelConfig(**cfg)).eval()


# ------------------------------------------------------------------ parameters


def test_parameter_table_at_the_defaults():
    assert parameter_counts() == DEFAULT_TABLE
    assert [row[0] for row in parameter_table()] == list(DEFAULT_TABLE)
    assert all(isinstance(formula, str) and formula for _, _, formula in parameter_table())
    assert count_parameters(Transformer()) == 72106


def test_the_parts_of_the_table_are_the_parts_of_the_model():
    m = Transformer()
    counts = parameter_counts()
    assert m.tok.weight.numel() == counts["token table"]
    assert count_parameters(m.blocks[0].attn) == counts["one attention"]
    assert count_parameters(m.blocks[0].ffn) == counts["one FFN"]
    assert count_parameters(m.blocks[0].ln1) == counts["one LayerNorm"]
    assert count_parameters(m.blocks[1]) == counts["one block"]
    assert count_parameters(m.ln_f) == counts["final LayerNorm"]
    assert count_parameters(m.head) == counts["output layer"]
    assert m.blocks[0].attn.W_Q.bias is None and m.blocks[0].attn.W_O.bias is not None
    assert "pos" not in dict(m.named_parameters()) and "pos" not in m.state_dict()


def test_4_to_8_heads_count_stays_exactly_the_same():
    assert parameter_counts(ModelConfig(n_heads=8)) == parameter_counts(ModelConfig(n_heads=4))
    assert count_parameters(Transformer(ModelConfig(n_heads=8))) == 72106


def test_analytic_table_equals_torch_count_for_random_configs():
    rng = random.Random(17)
    for _ in range(60):
        n_heads = rng.choice([1, 2, 3, 4, 6])
        cfg = ModelConfig(
            vocab_size=rng.randint(2, 60),
            d_model=n_heads * rng.randint(1, 12),
            n_heads=n_heads,
            n_layers=rng.randint(1, 4),
            d_ff=rng.randint(1, 100),
            max_len=rng.randint(1, 20),
        )
        counts = parameter_counts(cfg)
        m = Transformer(cfg)
        assert counts["total"] == count_parameters(m), cfg
        assert counts[f"{cfg.n_layers} blocks"] == sum(count_parameters(b) for b in m.blocks), cfg
        assert counts["one attention"] == count_parameters(m.blocks[0].attn), cfg
        assert counts["one FFN"] == count_parameters(m.blocks[0].ffn), cfg


# ------------------------------------------------------------------ sizes of the input rows


def test_token_rows_are_about_8_long_and_position_rows_about_5_7():
    m = _model()
    tokens = m.tok.weight.detach() * math.sqrt(64)
    token_lengths = tokens.norm(dim=1)
    assert 7.5 < float(token_lengths.mean()) < 8.5
    pos_lengths = m.pos.norm(dim=1)
    assert torch.allclose(pos_lengths, torch.full_like(pos_lengths, math.sqrt(32)), atol=1e-5)  # ≈ 5.66
    assert round(float(pos_lengths[0]), 1) == 5.7


def test_with_std_1_the_token_rows_are_11_times_the_position_rows():
    m = _model(emb_std=1.0)
    ratio = float((m.tok.weight.detach() * 8).norm(dim=1).mean()) / math.sqrt(32)
    assert round(ratio) == 11


def test_sinusoidal_positions():
    pe = sinusoidal_positions(16, 64)
    assert pe.shape == (16, 64) and pe.dtype == torch.float32
    pos, i = 5, 3
    angle = pos / 10000 ** (2 * i / 64)
    assert math.isclose(pe[pos, 2 * i], math.sin(angle), abs_tol=1e-6)
    assert math.isclose(pe[pos, 2 * i + 1], math.cos(angle), abs_tol=1e-6)
    assert sinusoidal_positions(4, 5).shape == (4, 5)  # odd widths work too


def test_embed_scales_token_rows_and_adds_positions():
    m = _model()
    ids = torch.tensor([prompt(89)])
    expected = m.tok.weight[ids] * 8 + m.pos[:3]
    assert torch.allclose(m.embed(ids), expected)
    assert torch.allclose(m.embed(ids[:, 1:], start=1), expected[:, 1:])
    unscaled = _model(scale_embedding=False)
    assert torch.allclose(unscaled.embed(ids), unscaled.tok.weight[ids] + unscaled.pos[:3])


# ------------------------------------------------------------------ shapes


def test_logits_and_attention_shapes_for_a_batch_of_64_with_8_tokens():
    numbers = list(range(714, 778))  # 777 has the longest x: 8 tokens
    x, _ = make_batch(numbers)
    assert tuple(x.shape) == (64, 8)
    logits, attention = _model()(x, return_attention=True)
    assert tuple(logits.shape) == (64, 8, 42)
    assert len(attention) == 2
    assert all(tuple(a.shape) == (64, 4, 8, 8) for a in attention)
    assert torch.allclose(attention[0].sum(-1), torch.ones(64, 4, 8), atol=1e-5)


def test_logits_of_0_to_63_flatten_to_320_by_42():
    x, y = make_batch(range(64))
    logits = _model()(x)
    assert tuple(logits.shape) == (64, 5, 42)
    assert tuple(logits.reshape(-1, 42).shape) == (320, 42)
    assert tuple(y.reshape(-1).shape) == (320,)


def test_eight_heads_give_attention_with_8_heads():
    _, attention = _model(n_heads=8)(torch.tensor([sequence(427)]), return_attention=True)
    assert tuple(attention[0].shape) == (1, 8, 9, 9)


def test_one_dimensional_ids_are_one_sequence():
    m = _model()
    ids = torch.tensor(sequence(427))
    assert torch.equal(m(ids), m(ids[None]))


def test_742_after_seven_hundred_forty_is_7_rows():
    from whole_transformer.task import encode

    rows = prompt(742) + encode("seven hundred forty")
    assert len(rows) == 7
    assert _model()(torch.tensor([rows])).shape[1] == 7


# ------------------------------------------------------------------ masks


def test_causal_a_later_token_never_changes_earlier_logits():
    m = _model()
    a = torch.tensor([sequence(427)])
    b = a.clone()
    b[0, 6] = 25  # change the 7th token
    la, lb = m(a), m(b)
    assert torch.allclose(la[0, :6], lb[0, :6], atol=1e-6)
    assert not torch.allclose(la[0, 6:], lb[0, 6:])


def test_right_padding_changes_nothing_at_the_real_positions():
    m = _model()
    alone = m(torch.tensor([sequence(5)]))  # 5 = five <eos>: 4 tokens
    x = torch.full((1, 9), PAD)
    x[0, :4] = torch.tensor(sequence(5))
    padded = m(x)
    assert torch.allclose(alone[0], padded[0, :4], atol=1e-5)


def test_mask_is_causal_and_hides_pad_keys():
    m = _model()
    ids = torch.tensor([[6, 4, 12, PAD]])
    mask = m.mask(ids)
    assert tuple(mask.shape) == (1, 1, 4, 4)
    assert mask[0, 0].tolist() == [
        [True, False, False, False],
        [True, True, False, False],
        [True, True, True, False],
        [True, True, True, False],
    ]


def test_without_the_causal_mask_earlier_positions_see_later_tokens():
    m = _model(causal=False)
    a = torch.tensor([sequence(427)])
    b = a.clone()
    b[0, 6] = 25
    assert not torch.allclose(m(a)[0, :6], m(b)[0, :6])
    assert bool(m.mask(a).all())


# ------------------------------------------------------------------ the fast paths give the same numbers


def test_softmax_rows_equals_torch_softmax():
    s = torch.randn(3, 4, 7, 7).masked_fill(~torch.tril(torch.ones(7, 7, dtype=torch.bool)), -1e9)
    assert torch.allclose(softmax_rows(s), torch.softmax(s, -1), atol=1e-6)
    g = torch.randn_like(s)
    s1, s2 = s.clone().requires_grad_(), s.clone().requires_grad_()
    (softmax_rows(s1) * g).sum().backward()
    (torch.softmax(s2, -1) * g).sum().backward()
    assert torch.allclose(s1.grad, s2.grad, atol=1e-6)


def test_logits_at_equals_the_full_logits_at_those_positions():
    m = _model()
    x, y = make_batch(range(100, 164))
    rows = y != PAD
    assert torch.allclose(logits_at(m, x, rows), m(x)[rows], atol=1e-5)
    # and so the training loss equals the loss over all positions with PAD ignored
    full = F.cross_entropy(m(x).reshape(-1, 42), y.reshape(-1), ignore_index=PAD)
    assert torch.allclose(F.cross_entropy(logits_at(m, x, rows), y[rows]), full, atol=1e-6)


def test_logits_at_rejects_a_bad_row_mask():
    m = _model()
    x, y = make_batch(range(3))
    with pytest.raises(ValueError, match="rows must be a bool tensor shaped like ids"):
        logits_at(m, x, (y != PAD).long())
    with pytest.raises(ValueError, match="rows must be a bool tensor shaped like ids"):
        logits_at(m, x, (y != PAD)[:, :2])


def test_extend_equals_rerunning_the_whole_prefix():
    m = _model()
    seqs = torch.tensor([sequence(n)[:8] for n in (427, 773, 905, 318)])  # (4, 8), no padding
    full = m(seqs)
    cache = {}
    parts = [extend(m, seqs[:, :4], cache)]
    for t in range(4, 8):
        parts.append(extend(m, seqs[:, t : t + 1], cache))
    assert torch.allclose(torch.cat(parts, 1), full, atol=1e-5)
    assert cache["ids"].shape == (4, 8)
    # keep only some rows and go on
    rows = torch.tensor([True, False, True, False])
    small = cache_rows(cache, rows)
    assert small["ids"].shape == (2, 8) and small["blocks"][0]["k"].shape == (2, 4, 8, 16)


def test_extend_refuses_a_model_without_causal_mask_and_too_long_input():
    with pytest.raises(ValueError, match="extend needs the causal mask"):
        extend(_model(causal=False), torch.tensor([prompt(5)]), {})
    m = _model()
    cache = {}
    extend(m, torch.tensor([[6] * 10]), cache)
    with pytest.raises(ValueError, match="longer than max_len=16"):
        extend(m, torch.tensor([[6] * 7]), cache)


def test_single_thread_restores_the_thread_count():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with single_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


# ------------------------------------------------------------------ bad configs and input


@pytest.mark.parametrize("name", ["vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"])
@pytest.mark.parametrize("value", [0, -3, 2.5, True, "4"])
def test_sizes_must_be_whole_numbers_of_at_least_1(name, value):
    with pytest.raises(ValueError, match=rf"{name} must be a whole number of at least 1, got {re.escape(repr(value))}"):
        ModelConfig(**{name: value})


def test_heads_must_divide_d_model():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "n_heads=5 does not divide d_model=64: each head takes d_model / n_heads columns; "
            "choose one of [1, 2, 4, 8, 16, 32, 64]"
        ),
    ):
        ModelConfig(n_heads=5)
    with pytest.raises(ValueError, match=r"n_heads=4 does not divide d_model=6"):
        ModelConfig(d_model=6, n_heads=4)


@pytest.mark.parametrize("std", [0, -1.0, "big", float("nan")])
def test_emb_std_must_be_positive(std):
    with pytest.raises(ValueError, match="emb_std must be a positive number or None"):
        ModelConfig(emb_std=std)


def test_pad_id_must_be_a_token_id():
    with pytest.raises(ValueError, match="pad_id must be a token id from 0 to 41, got 42"):
        ModelConfig(pad_id=42)


def test_config_round_trip_and_unknown_fields():
    cfg = ModelConfig(d_model=32, n_heads=2, emb_std=0.5, causal=False)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match=r"unknown config fields \['dropout'\]; known fields are"):
        ModelConfig.from_dict({**cfg.to_dict(), "dropout": 0.1})


def test_input_longer_than_max_len_raises():
    m = _model(max_len=8)
    with pytest.raises(ValueError, match="input of 9 tokens is longer than max_len=8"):
        m(torch.tensor([sequence(427)]))


def test_d_head_and_init_std():
    assert ModelConfig().d_head == 16
    assert ModelConfig().init_std == 1 / 8
    assert ModelConfig(emb_std=1.0).init_std == 1.0
