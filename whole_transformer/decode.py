"""Reading numbers aloud with a trained model: greedy decoding, one token at a time.

``greedy_trace`` reads one number and records every step (the rows fed in, the last row's
scores, every block's attention) for the decode lab; like the course explains inference, each
step runs the model over the whole prefix again. ``read_numbers`` reads many numbers at once
(all 1,000 in about 50 ms on one core, some 25-35 times faster than one at a time) and gives the
same answers; ``evaluate`` lists the mistakes, not only a score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from .fast import cache_rows, extend, single_thread
from .model import Transformer
from .task import EOS, answer_words, expected_answer, prompt

MAX_NEW = 6  # the longest answer, "seven hundred seventy seven <eos>", has 5 tokens


@dataclass
class Step:
    """One step of greedy decoding."""

    ids_in: list[int]  # the rows that go in
    scores: np.ndarray  # (V,) the last row's logits
    attention: list[np.ndarray]  # one (h, L, L) per block
    picked: int  # the id appended

    @property
    def top(self) -> list[tuple[int, float]]:
        order = np.argsort(-self.scores, kind="stable")
        return [(int(i), float(self.scores[i])) for i in order[:5]]


@dataclass
class Trace:
    prompt: list[int]
    steps: list[Step] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return self.prompt + [s.picked for s in self.steps]

    @property
    def answer(self) -> str:
        return answer_words(self.ids[len(self.prompt) :])

    @property
    def finished(self) -> bool:
        return bool(self.steps) and self.steps[-1].picked == EOS


def _check_prompt(prompt_ids: Sequence[int]) -> list[int]:
    ids = [int(i) for i in prompt_ids]
    if not ids:
        raise ValueError("the prompt is empty: give the digits of a number and '=', e.g. prompt(89)")
    return ids


@torch.no_grad()
def greedy_step(model: torch.nn.Module, ids: Sequence[int]) -> Step:
    """Run the model over ids, take the last row, pick the highest score."""
    x = torch.tensor([list(ids)], dtype=torch.long)
    logits, attention = model(x, return_attention=True)
    scores = logits[0, -1].numpy()  # (V,)
    return Step(list(ids), scores, [a[0].numpy() for a in attention], int(scores.argmax()))


def greedy_trace(model: torch.nn.Module, prompt_ids: Sequence[int], max_new: int = MAX_NEW) -> Trace:
    """Greedy decoding of one prompt, every step recorded; stops at <eos> or after max_new tokens."""
    trace = Trace(_check_prompt(prompt_ids))
    model.eval()
    with single_thread():
        while len(trace.steps) < max_new and not trace.finished:
            trace.steps.append(greedy_step(model, trace.ids))
    return trace


@torch.no_grad()
def read_numbers(
    model: torch.nn.Module, numbers: Iterable[int], max_new: int = MAX_NEW, *, kv_cache: bool = True
) -> dict[int, str]:
    """Read many numbers at once; returns {number: the words the model wrote}.

    Greedy decoding, the same as one number at a time, but batched: the prompts are grouped by
    length (1, 2 or 3 digits), so within a group every row writes its next token in the same
    column and no padding is needed. A row leaves the batch once it writes <eos>. Each step runs
    only the newest token (``fast.extend`` keeps the earlier keys and values), so all
    1,000 numbers take a few milliseconds per step. With ``kv_cache=False`` each step re-reads every
    row instead (the same answers, for comparing the two: ``make bench``).
    """
    numbers = list(numbers)
    prompts = {n: prompt(n) for n in numbers}  # also checks every number
    if isinstance(max_new, bool) or not isinstance(max_new, int) or max_new < 1:
        raise ValueError(f"max_new must be a whole number of at least 1, got {max_new!r}")
    model.eval()
    # A model without the causal mask (the course's ablation) lets earlier positions see later
    # ones, so their keys change as the answer grows: it must re-run the whole prefix each step.
    fast = kv_cache and isinstance(model, Transformer) and model.cfg.causal  # kv_cache=False: re-read every row
    said: dict[int, list[int]] = {n: [] for n in prompts}
    groups: dict[int, list[int]] = {}
    for n, p in prompts.items():
        groups.setdefault(len(p), []).append(n)
    with single_thread():
        for group in groups.values():
            rows = list(group)  # the numbers still writing, in the order of the rows
            cache: dict = {}
            ids = new = torch.tensor([prompts[n] for n in rows])  # (G, prompt length) no padding
            for _ in range(max_new):
                if fast:
                    nxt = extend(model, new, cache)[:, -1].argmax(-1)  # (G,)
                else:  # re-run the whole prefix
                    nxt = model(ids)[:, -1].argmax(-1)
                for n, t in zip(rows, nxt.tolist(), strict=True):
                    said[n].append(t)
                going = nxt != EOS
                if not bool(going.any()):
                    break
                if fast:
                    cache = cache_rows(cache, going)
                ids = torch.cat([ids, nxt[:, None]], 1)[going]  # (G', length + 1)
                new = nxt[going, None]  # (G', 1)
                rows = [n for n, g in zip(rows, going.tolist(), strict=True) if g]
    return {n: answer_words(said[n]) for n in numbers}


@dataclass
class Evaluation:
    correct: int
    total: int
    mistakes: list[tuple[int, str]]  # (number, what the model said)
    task: str = "read"

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def report(self, limit: int = 10) -> str:
        lines = [f"{self.correct}/{self.total} right ({100 * self.accuracy:.0f} %)"]
        for n, said in self.mistakes[:limit]:
            lines.append(f"  reads {n} as {said or '(nothing)'!r}, should be {expected_answer(n, self.task)!r}")
        if len(self.mistakes) > limit:
            lines.append(f"  … and {len(self.mistakes) - limit} more")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


def evaluate(model: torch.nn.Module, numbers: Iterable[int], task: str = "read") -> Evaluation:
    """Read every number and compare with the right answer; the mistakes are kept for printing."""
    numbers = list(numbers)
    said = read_numbers(model, numbers)
    mistakes = [(n, said[n]) for n in numbers if said[n] != expected_answer(n, task)]
    return Evaluation(len(numbers) - len(mistakes), len(numbers), mistakes, task)
