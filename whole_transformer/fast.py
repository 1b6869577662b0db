"""The same numbers as ``model.Transformer`` for less work: what the course runs, not what it teaches.

``model.py`` is the one forward path a student reads. Training and batched decoding take three
shortcuts through the same modules and weights, each proven equal to the plain forward pass by
tests/test_model.py and tests/test_decode.py:

- one torch thread (set when this module is imported; ``single_thread`` for a block of code);
- ``logits_at``: scores only at the rows whose targets count (training);
- ``extend`` with a cache of keys and values: run only the new tokens (``decode.read_numbers``);
  ``cache_rows`` keeps only some rows of a cache.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

# One thread for torch in every process that runs the course's model. Its matrices are tiny: a
# second thread saves nothing, and on a busy machine (a laptop in class, a shared CI runner, an
# autograder running notebooks side by side) threads waiting for each other make every step many
# times slower. One thread also makes training give the same numbers whatever the core count.
# Call torch.set_num_threads after this import to choose otherwise.
torch.set_num_threads(1)


@contextmanager
def single_thread():
    """Run torch on one thread inside the block, then restore the thread count (see above)."""
    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def logits_at(model, ids: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The logits only where ``rows`` (B, L) is True: (N, V), the same numbers as ``model(ids)[rows]``.

    Training needs scores only at the positions whose targets count (about half of them). After the
    last block's attention every step works on each row alone (LayerNorm, FFN, the residual, the
    output layer), so the other rows are dropped there: a training step does about a tenth less work.
    """
    if rows.shape != ids.shape or rows.dtype != torch.bool:
        raise ValueError(
            f"rows must be a bool tensor shaped like ids {tuple(ids.shape)}, got {rows.dtype} {tuple(rows.shape)}"
        )
    model.check_length(ids.shape[1])
    mask = model.mask(ids)  # (B, 1, L, L)
    x = model.embed(ids)  # (B, L, d_model)
    *first, last = model.blocks
    for block in first:
        x, _ = block(x, mask)
    x = x + last.attn(last.ln1(x), mask)[0]  # attention: the one step that mixes rows
    x = x[rows]  # (N, d_model)
    x = x + last.ffn(last.ln2(x))
    return model.head(model.ln_f(x))  # (N, V)


@torch.no_grad()
def extend(model, new_ids: torch.Tensor, cache: dict) -> torch.Tensor:
    """Fast decoding: run only the new tokens (B, T), reusing the earlier positions' keys and values.

    Start with ``cache = {}`` and the prompts, then give one column of next tokens per call;
    returns the logits of the new positions (B, T, V). The numbers are those of re-running the
    whole sequence (``model(ids)``, as the course does inference), up to float rounding: keys and
    values of earlier positions never change, because no position sees later ones.
    """
    if not model.cfg.causal:
        raise ValueError("extend needs the causal mask: without it earlier positions see the new tokens")
    before = cache.get("ids")
    start = 0 if before is None else before.shape[1]
    ids = new_ids if before is None else torch.cat([before, new_ids], 1)  # (B, start + T)
    model.check_length(ids.shape[1])
    mask = model.mask(ids)[:, :, start:]  # (B, 1, T, start + T) the new queries, all keys
    x = model.embed(new_ids, start)  # (B, T, d_model)
    pasts = cache.setdefault("blocks", [{} for _ in model.blocks])
    for block, past in zip(model.blocks, pasts, strict=True):
        q, k, v = block.attn.split_heads(block.ln1(x))  # (B, h, T, d_k) each
        if past:
            k = torch.cat([past["k"], k], 2)  # (B, h, start + T, d_k)
            v = torch.cat([past["v"], v], 2)
        past["k"], past["v"] = k, v
        x = x + block.attn.attend(q, k, v, mask)[0]
        x = x + block.ffn(block.ln2(x))
    cache["ids"] = ids
    return model.head(model.ln_f(x))  # (B, T, V)


def cache_rows(cache: dict, rows: torch.Tensor) -> dict:
    """A decoding cache (see ``extend``) with only the given rows (a bool mask or indices)."""
    return {
        "ids": cache["ids"][rows],
        "blocks": [{"k": past["k"][rows], "v": past["v"][rows]} for past in cache["blocks"]],
    }
