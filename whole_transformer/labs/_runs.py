"""The training lab's runs (notebook 04): what each trains, and how the chart and the table tell it apart
(a label, an Okabe and Ito colour and a marker shape each); ``training`` trains them, ``_chart`` draws them."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ModelConfig


@dataclass(frozen=True)
class RunSpec:
    label: str
    model_config: ModelConfig
    task: str
    colour: str
    about: str
    marker: str = "circle"  # the shape drawn at each epoch's point: runs differ by more than colour


RUNS: dict[str, RunSpec] = {
    # Okabe and Ito's colours (blue, vermillion, reddish purple, orange, bluish green), each with its own marker
    "main": RunSpec(
        "the course's model",
        ModelConfig(),
        "read",
        "rgb(0,114,178)",
        "d_model 64, 4 heads, 2 blocks, causal mask, token table std 1/√64",
        "circle",
    ),
    "no_mask": RunSpec(
        "no causal mask",
        ModelConfig(causal=False),
        "read",
        "rgb(213,94,0)",
        "every position may look at every other, the next token included",
        "square",
    ),
    "std1": RunSpec(
        "token table std 1",
        ModelConfig(emb_std=1.0),
        "read",
        "rgb(204,121,167)",
        "token rows start 8 times larger, so they drown the positions",
        "triangle",
    ),
    "no_scale": RunSpec(
        "no × √d_model",
        ModelConfig(scale_embedding=False),
        "read",
        "rgb(230,159,0)",
        "token rows not multiplied by √64 = 8: about 1 long beside position rows about 5.7 long",
        "triangle-down",
    ),
    "copy": RunSpec(
        "copy task", ModelConfig(), "copy", "rgb(0,158,115)", "1 2 3 = 1 2 3: the debugging habit", "diamond"
    ),
}
