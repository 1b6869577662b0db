"""The catalogue of typical mistakes in the four exercises, as the wrong code a student might write.

Instructor-only (it is not in the students' handout: several of these are one argument away from a
right answer). ``checkdata.py`` runs each mistake on the visible checks' fixed cases and stores
hashes of what it returns, with its hint, in ``whole_transformer/data/exercise_checks.json``; the
visible check then names the mistake whose results the student's function reproduces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as _np

from . import reference as _ref


@dataclass
class Mistake:
    name: str
    code: Callable
    hint: str

def _nt_score(h, W, b):
    return _np.max(h @ W + b)

def _nt_no_bias(h, W, b):
    return int(_np.argmax(h @ W))

def _nt_argmin(h, W, b):
    return int(_np.argmin(h @ W + b))

def _nt_w_at_h(h, W, b):
    return int(_np.argmax(W @ h + b))

def _nt_last_on_tie(h, W, b):
    return int(_np.argsort(h @ W + b)[-1])

def _nt_best_from_zero(h, W, b):
    scores = h @ W + b
    best, best_id = 0.0, 0
    for i, s in enumerate(scores):
        if s > best:
            best, best_id = s, i
    return best_id

def _gd_eos_dropped(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model(ids)[-1]))
        if nxt == eos:
            break
        ids.append(nxt)
    return ids

def _gd_prompt_only(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model(prompt)[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids

def _gd_last_token(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model([ids[-1]])[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids

def _gd_first_row(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model(ids)[0]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids

def _gd_steps(extra):
    def decode(model, prompt, eos=1, max_new=6):
        ids = list(prompt)
        for _ in range(max_new + extra):
            nxt = int(_np.argmax(model(ids)[-1]))
            ids.append(nxt)
            if nxt == eos:
                break
        return ids

    return decode

def _gd_scores(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        best = model(ids)[-1].max()
        ids.append(best)
        if best == eos:
            break
    return ids

def _gd_no_stop(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        ids.append(int(_np.argmax(model(ids)[-1])))
    return ids

def _gd_eos_is_1(model, prompt, eos=1, max_new=6):
    return _ref.greedy_decode(model, prompt, eos=1, max_new=max_new)

def _gd_changes_prompt(model, prompt, eos=1, max_new=6):
    ids = prompt
    for _ in range(max_new):
        nxt = int(_np.argmax(model(ids)[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids

def _gd_answer_only(model, prompt, eos=1, max_new=6):
    return _ref.greedy_decode(model, prompt, eos, max_new)[len(prompt):]

def _gd_last_on_tie(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argsort(model(ids)[-1], kind="stable")[-1])
        ids.append(nxt)
        if nxt == eos:
            break
    return ids

def _xy_split(k_shift=0, pad_arg=True, eq_arg=True):
    def make_xy(seq, eq=12, pad=0):
        x, y = list(seq[:-1]), list(seq[1:])
        k = list(seq).index(eq if eq_arg else 12) + k_shift
        for i in range(max(k, 0)):
            y[i] = pad if pad_arg else 0
        return x, y

    return make_xy

def _xy_no_shift(seq, eq=12, pad=0):
    k = list(seq).index(eq)
    return list(seq), [pad] * (k + 1) + list(seq[k + 1:])

def _xy_same_rows(seq, eq=12, pad=0):
    x = list(seq[:-1])
    k = x.index(eq)
    return x, [pad] * (k + 1) + x[k + 1:]

def _xy_reversed(seq, eq=12, pad=0):
    x, y = list(seq[1:]), list(seq[:-1])
    k = list(seq).index(eq)
    return x, [pad] * k + y[k:]

def _xy_x_padded(seq, eq=12, pad=0):
    x, y = _ref.make_xy(seq, eq, pad)
    k = list(seq).index(eq)
    return [pad] * k + x[k:], y

def _xy_changes_seq(seq, eq=12, pad=0):
    x, y = _ref.make_xy(seq, eq, pad)
    seq.pop()
    return x, y

def _ml_nll(logits, targets):
    p = _ref.softmax(logits)
    return -_np.log(p[_np.arange(len(targets)), targets])

def _ml_all_rows(logits, targets, pad=0):
    return float(_ml_nll(logits, targets).mean())

def _ml_keep_mean(logits, targets, pad=0):
    keep = targets != pad
    return float((_ml_nll(logits, targets) * keep).mean())

def _ml_pad_zero(logits, targets, pad=0):
    return float(_ml_nll(logits, targets)[targets != 0].mean())

def _ml_sum(logits, targets, pad=0):
    return float(_ml_nll(logits, targets)[targets != pad].sum())

def _ml_sign(logits, targets, pad=0):
    return -float(_ml_nll(logits, targets)[targets != pad].mean())

def _ml_inverted(logits, targets, pad=0):
    return float(_ml_nll(logits, targets)[targets == pad].mean())

def _ml_no_log(logits, targets, pad=0):
    p = _ref.softmax(logits)[_np.arange(len(targets)), targets]
    return float(-p[targets != pad].mean())

def _ml_naive(logits, targets, pad=0):
    e = _np.exp(logits)
    p = e / e.sum(axis=1, keepdims=True)
    nll = -_np.log(p[_np.arange(len(targets)), targets])
    return float(nll[targets != pad].mean())

MISTAKES: dict[str, list[Mistake]] = {
    "next_token": [
        Mistake("returns the score", _nt_score,
                     "It returns the highest score, not its id: np.argmax gives the position of the highest score."),
        Mistake("no bias", _nt_no_bias, "The bias b is missing: the scores are h @ W + b."),
        Mistake("argmin", _nt_argmin, "It picks the lowest score; greedy decoding picks the highest."),
        Mistake("W @ h", _nt_w_at_h,
                     "Check the product: h is (d,) and W is (d, V), so the scores are h @ W + b, of shape (V,)."),
        Mistake("last on a tie", _nt_last_on_tie,
                     "On a tie it picks the last of the highest scores. Take the first one (the lowest id), "
                     "as np.argmax does."),
        Mistake("search starts at 0", _nt_best_from_zero,
                     "When every score is negative it picks id 0: start the search from the first score "
                     "(or from -inf), not from 0."),
    ],
    "greedy_decode": [
        Mistake("eos dropped", _gd_eos_dropped,
                     "<eos> is missing from the end. Append the picked id first, then stop if it is eos: the "
                     "result keeps eos."),
        Mistake("prompt only", _gd_prompt_only,
                     "Every step must run the model on everything so far (the prompt and the ids already "
                     "picked), not on the prompt alone."),
        Mistake("last token only", _gd_last_token,
                     "It runs the model on the last token only. The model needs every id so far: pass the "
                     "whole list, then read the last row."),
        Mistake("first row", _gd_first_row,
                     "It reads the first row of the scores. Only the last row (scores[-1]) chooses the next token."),
        Mistake("one too many", _gd_steps(1),
                     "It writes one token too many: at most max_new new ids (for _ in range(max_new))."),
        Mistake("one too few", _gd_steps(-1),
                     "It writes one token too few: max_new new ids are allowed (for _ in range(max_new))."),
        Mistake("scores, not ids", _gd_scores,
                     "It appends scores, not ids. Append the position of the highest score (np.argmax)."),
        Mistake("never stops at eos", _gd_no_stop,
                     "It does not stop at eos: break right after appending the eos id."),
        Mistake("eos hard-coded", _gd_eos_is_1,
                     "It stops at id 1 whatever eos is: compare with the eos argument."),
        Mistake("changes the prompt", _gd_changes_prompt,
                     "It changes the caller's prompt: start from a copy, ids = list(prompt)."),
        Mistake("last on a tie", _gd_last_on_tie,
                     "When several scores tie for the highest it picks the last of them. Take the first (the "
                     "lowest id), as np.argmax does."),
        Mistake("answer only", _gd_answer_only,
                     "Return the whole list: the prompt, then the picked ids (ending with eos if it was picked)."),
    ],
    "make_xy": [
        Mistake("no shift", _xy_no_shift,
                     "x and y are not shifted: x is the sequence without its last token, y without its first."),
        Mistake("same rows", _xy_same_rows,
                     "x and y are not shifted: x is the sequence without its last token, y without its first."),
        Mistake("shift reversed", _xy_reversed,
                     "The shift goes the other way: x = seq[:-1] (without the last token), y = seq[1:] "
                     "(without the first)."),
        Mistake("'=' target kept", _xy_split(-1),
                     "The target '=' (under the last digit) is kept. It is part of the question: every target up "
                     "to and including '=' becomes pad."),
        Mistake("first word dropped", _xy_split(+1),
                     "The first word's target (the one under '=') is padded too. It is the first word of the "
                     "answer and must count: pad only the targets up to and including '='."),
        Mistake("pad hard-coded", _xy_split(pad_arg=False),
                     "It writes 0 for the skipped targets; use the pad argument (the course's PAD is 0, but a "
                     "caller may give another id)."),
        Mistake("eq hard-coded", _xy_split(eq_arg=False),
                     "It looks for id 12; look for the eq argument instead."),
        Mistake("x padded too", _xy_x_padded,
                     "Only the targets y are set to pad; x keeps every token (the model must read the question)."),
        Mistake("changes seq", _xy_changes_seq,
                     "It changes the caller's sequence: build x and y as new lists (seq[:-1] and seq[1:] are copies)."),
    ],
    "masked_loss": [
        Mistake("mean over all rows", _ml_all_rows,
                     "It averages over every row, PAD rows included. Keep only the rows whose target is not pad."),
        Mistake("(nll * keep).mean()", _ml_keep_mean,
                     "It divides the sum by every row, PAD rows included, so the loss comes out too small. "
                     "Average over the rows that count only."),
        Mistake("pad hard-coded", _ml_pad_zero,
                     "It skips the targets that are 0; skip the ones equal to the pad argument (pad may not be 0)."),
        Mistake("sum", _ml_sum, "It returns the sum; the loss is the mean over the rows that count."),
        Mistake("sign", _ml_sign, "The sign is wrong: the loss is −log p of the right token, a positive number."),
        Mistake("mask inverted", _ml_inverted,
                     "It keeps the PAD rows and drops the others: the rows that count are targets != pad."),
        Mistake("no log", _ml_no_log,
                     "The cross-entropy of a row is −log p of its right token, not −p."),
        Mistake("softmax without the max", _ml_naive,
                     "With large logits it gives nan or inf: exp overflows. Use the notebook's softmax, which "
                     "subtracts each row's maximum first."),
    ],
}
