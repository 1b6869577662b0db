"""The sampling lab's pieces (notebook 03): one step's scores, what each setting keeps, twenty readings, and the table.

``Settings`` holds the lab's temperature, top-k (0: off) and top-p (1: off). ``stages(scores, s)`` gives the
probability of every token after each setting in turn: the softmax of the scores, then with the temperature,
then after top-k, then after top-p (each renormalised over what it keeps), and why each dropped token went.
``read_many`` samples whole readings of a number, all at once as one batch through the model.
``table_html`` draws every token as a row: its score, its probability after each setting, a bar, and the
word "kept" or "dropped (top-k)" / "dropped (top-p)"; a dropped row is also hatched and greyed, so no colour is
needed to tell them apart.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from ..model import Transformer
from ..task import EOS, VOCAB, expected_answer, prompt, sequence
from ._html import esc, sr

MAX_WORDS = 8  # a reading stops after this many new tokens without <eos>
KEPT_LOOK = "background: white;"
DROPPED_LOOK = "background: repeating-linear-gradient(135deg, #fff 0 3px, #e2e2e2 3px 6px); color: #595959;"
BAR = "rgb(33,102,172)"


@dataclass(frozen=True)
class Settings:
    temperature: float = 1.0
    top_k: int = 0  # 0: off
    top_p: float = 1.0  # 1: off

    def text(self) -> str:
        k = f"top-k {self.top_k}" if self.top_k else "top-k off"
        p = f"top-p {self.top_p:g}" if self.top_p < 1 else "top-p off"
        return f"temperature {self.temperature:g}, {k}, {p}"


@dataclass
class Stages:
    scores: np.ndarray  # (V,)
    plain: np.ndarray  # (V,) softmax of the scores
    warmed: np.ndarray  # (V,) softmax of scores / temperature
    after_k: np.ndarray  # (V,) renormalised over the top-k
    final: np.ndarray  # (V,) renormalised over what top-p keeps of those
    why: list[str]  # per token: "kept", "dropped (top-k)" or "dropped (top-p)"

    @property
    def kept(self) -> int:
        return sum(w == "kept" for w in self.why)


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.double(), dim=-1)


def keep_mask(probs: torch.Tensor, s: Settings) -> tuple[torch.Tensor, torch.Tensor]:
    """(kept by top-k, kept by top-p as well): boolean (..., V). A token's rank is how many probabilities lie
    above it; top-p keeps a token while the mass above it is still short of p, the one that crosses p too."""
    rank = probs.argsort(dim=-1, descending=True, stable=True).argsort(dim=-1)  # (..., V) 0 = the highest
    by_k = rank < s.top_k if s.top_k else torch.ones_like(probs, dtype=torch.bool)
    mass = torch.where(by_k, probs, torch.zeros_like(probs))
    mass = mass / mass.sum(dim=-1, keepdim=True)
    sorted_mass = mass.sort(dim=-1, descending=True, stable=True).values
    above = (sorted_mass.cumsum(dim=-1) - sorted_mass).gather(-1, rank)  # (..., V) the mass ranked above each
    by_p = by_k & (above < s.top_p) if s.top_p < 1 else by_k
    return by_k, by_p


def _renorm(probs: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    kept = torch.where(keep, probs, torch.zeros_like(probs))
    return kept / kept.sum(dim=-1, keepdim=True)


def stages(scores: np.ndarray, s: Settings) -> Stages:
    """The probability of every token after each setting, for one step's scores (V,)."""
    x = torch.as_tensor(np.asarray(scores, dtype=np.float64))
    warmed = _softmax(x / s.temperature)
    by_k, by_p = keep_mask(warmed, s)
    why = ["kept" if p else ("dropped (top-p)" if k else "dropped (top-k)") for k, p in zip(by_k, by_p, strict=True)]
    return Stages(
        np.asarray(scores, dtype=np.float64),
        _softmax(x).numpy(),
        warmed.numpy(),
        _renorm(warmed, by_k).numpy(),
        _renorm(warmed, by_p).numpy(),
        why,
    )


def step_scores(model: Transformer, n: int, step: int) -> np.ndarray:
    """The last row's 42 scores when the model has read n's prompt and the first step - 1 words of its answer."""
    ids = sequence(n)[: len(prompt(n)) + step - 1]
    with torch.no_grad():
        return model(torch.tensor([ids]))[0, -1].double().numpy()  # (V,)


def read_many(model: Transformer, n: int, s: Settings, times: int, seed: int) -> list[str]:
    """``times`` readings of n, each token drawn with the settings (one torch Generator seeded with ``seed``)."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.tensor([prompt(n)] * times)  # (times, L)
    done = torch.zeros(times, dtype=torch.bool)
    with torch.no_grad():
        for _ in range(MAX_WORDS):
            warmed = _softmax(model(ids)[:, -1] / s.temperature)  # (times, V)
            nxt = torch.multinomial(_renorm(warmed, keep_mask(warmed, s)[1]), 1, generator=gen)[:, 0]  # (times,)
            nxt = torch.where(done, torch.full_like(nxt, EOS), nxt)
            ids = torch.cat([ids, nxt[:, None]], dim=1)
            done |= nxt == EOS
            if bool(done.all()):
                break
    start = len(prompt(n))
    return [" ".join(VOCAB[i] for i in row[start:] if i != EOS) for row in ids.tolist()]


def tally(n: int, readings: list[str]) -> tuple[int, list[tuple[str, int]]]:
    """(how many readings are right, the wrong ones with how often each came, most common first)."""
    want = expected_answer(n)
    wrong = Counter(r for r in readings if r != want)
    return len(readings) - sum(wrong.values()), wrong.most_common()


def _bar(p: float, kept: bool) -> str:
    hatch = "repeating-linear-gradient(135deg, #767676 0 2px, #fff 2px 4px)"
    inner = (
        f'<span style="display: block; width: {round(120 * p)}px; height: 11px; background: {BAR if kept else hatch};">'
    )
    return (
        '<span style="display: inline-block; width: 120px; background: #f1f1f1; vertical-align: middle;" '
        f'aria-hidden="true">{inner}</span></span>'
    )


def table_html(st: Stages, s: Settings, picked_right: str | None) -> str:
    """Every token, highest score first: score, probability after each setting, a bar and kept or dropped."""
    order = np.argsort(-st.scores, kind="stable")
    th = '<th scope="col" style="text-align: {};">{}</th>'
    heads = ["rank", "token", "score", "softmax", f"÷ temperature {s.temperature:g}", "after top-k", "after top-p"]
    head = "".join(th.format("left" if h in ("rank", "token") else "right", esc(h)) for h in heads)
    rows = []
    for rank, i in enumerate(order, start=1):
        kept = st.why[i] == "kept"
        right = sr(" (the right next word)") + " ✓" if VOCAB[i] == picked_right else ""
        cells = [f"{st.plain[i]:.4f}", f"{st.warmed[i]:.4f}", f"{st.after_k[i]:.4f}", f"{st.final[i]:.4f}"]
        rows.append(
            f'<tr class="wt-sampling-row {"wt-kept" if kept else "wt-dropped"}" data-token="{esc(VOCAB[i])}" '
            f'data-p="{st.final[i]:.6f}" style="{KEPT_LOOK if kept else DROPPED_LOOK}">'
            f"<td>{rank}</td><td><b>{esc(VOCAB[i])}</b>{right}</td>"
            f'<td style="text-align: right;">{st.scores[i]:.2f}</td>'
            + "".join(f'<td style="text-align: right;">{c}</td>' for c in cells)
            + f"<td>{_bar(float(st.final[i]), kept)} {'kept' if kept else esc(st.why[i])}</td></tr>"
        )
    return (
        '<div class="wt-scroll wt-sampling-table" tabindex="0" role="region" aria-label="every token\'s '
        'probability after each setting" style="max-height: 330px;">'
        '<table class="wt-table" style="font-size: 12px;"><caption style="text-align: left;">'
        f"{st.kept} of {len(st.why)} tokens kept; dropped rows are hatched, greyed and say why</caption>"
        f'<tr>{head}<th scope="col">drawn from (bar: probability)</th></tr>{"".join(rows)}</table></div>'
    )


def readings_html(n: int, right: int, wrong: list[tuple[str, int]], times: int, s: Settings, seed: int) -> str:
    """How many of the readings are right, and the most common wrong ones, as a table."""
    head = f"{right} of {times} readings of {n} are right ({s.text()}, seed {seed})."
    if not wrong:
        return f'<div class="wt-sampling-readings" data-right="{right}"><b>{esc(head)}</b></div>'
    rows = "".join(
        f"<tr><td>{esc(r or '(nothing)')}</td><td style='text-align: right;'>{c}</td></tr>" for r, c in wrong[:5]
    )
    return (
        f'<div class="wt-sampling-readings" data-right="{right}"><b>{esc(head)}</b> The most common wrong ones '
        f"(the right one: {esc(expected_answer(n))}):"
        '<table class="wt-table"><tr><th scope="col">wrong reading</th><th scope="col">times</th></tr>'
        f"{rows}</table></div>"
    )
