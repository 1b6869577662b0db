"""The hidden tests: every exercise's cases, worked out with the reference.

An exercise's cases live here (``<exercise>_cases``): the inputs as Python source (literals, or made
from seeds by ``grading``'s private functions) and the right result worked out with the reference
solutions (``reference.py``); a question's answer lives in its solution cell of the source notebook.
``hidden_parts.py`` writes them as a test cell's hidden part (the code the kernel runs, the expected
values only the grader reads), stamped with a digest. The only cases that use a trained model read
numbers with the 60-epoch model, whose right answers do not depend on its exact weights (it reads
all 1,000 numbers right. ``hidden_cells.py`` keeps source/'s test cells in step with them:

    python -m whole_transformer.course hidden-tests           # are the notebooks' hidden tests in sync?
    python -m whole_transformer.course hidden-tests --write   # rewrite them (only the hidden parts)
"""

from __future__ import annotations

import numpy as np

from whole_transformer import grading as g
from whole_transformer import task

from . import reference as ref
from .hidden_cached import cached_attention_cases
from .hidden_forward import decoder_block_cases, forward_cases, layer_norm_cases, multi_head_attention_cases
from .hidden_parts import Case, json_data, kernel_names
from .hidden_sampling import sample_cases

NS = {"g": g, "np": np, "task": task}


def _ev(expr, extra=None):
    return eval(expr, {**NS, **(extra or {})})  # noqa: S307 - the course's own case expressions, never a student's


def _case(reference, kind, args, kwargs="{}", extra=None, *, watch=None, changed=None, rel=None) -> Case:
    a, kw = _ev(args, extra), _ev(kwargs, extra)
    before = json_data(list(a[watch])) if watch is not None else None
    want = json_data(reference(*[list(x) if i == watch else x for i, x in enumerate(a)], **kw))
    return Case(kind, args, kwargs, want, rel, watch, before, changed)


# ---------------------------------------------------------------- next_token
def next_token_cases():
    R, A = "g.random_array", "g.array"
    # one case a row (a table reads best that way), so the formatter leaves it as it is
    # fmt: off
    cases = [
        ("random h, W, b (d 5, V 9)", f"{R}(3101, 5)", f"{R}(3102, (5, 9))", f"{R}(3103, 9)"),
        ("random h, W, b (d 64, V 42, as in the model)", f"{R}(3111, 64)", f"{R}(3112, (64, 42))", f"{R}(3113, 42)"),
        ("random h, W, b (d 1, V 3)", f"{R}(3121, 1)", f"{R}(3122, (1, 3))", f"{R}(3123, 3)"),
        ("random h, W, b (d 3, V 12)", f"{R}(3131, 3)", f"{R}(3132, (3, 12))", f"{R}(3133, 12)"),
        ("a square W (d = V = 6)", f"{R}(3141, 6)", f"{R}(3142, (6, 6))", f"{R}(3143, 6)"),
        ("the bias decides", f"{A}([1.0, 1.0])", f"{A}([[2.0, 0.0, 1.0], [0.0, 2.0, 1.0]])", f"{A}([0.0, -1.0, 0.5])"),
        ("the bias decides", f"{A}([0.5, -1.0])", f"{A}([[1.0, 3.0, 0.0, 1.0], [0.0, 1.0, -1.0, 0.5]])",
         f"{A}([0.0, -1.0, 0.0, 0.75])"),
        ("a tie between two ids", f"{A}([1.0])", f"{A}([[0.5, 1.0, 3.0, -1.0, 2.0, 3.0]])", f"{A}([0.0] * 6)"),
        ("a tie between two ids", f"{A}([1.0, 2.0])", f"{A}([[1.0, 2.0, 0.0, 4.0], [1.0, 1.0, 0.5, 0.0]])",
         f"{A}([1.0, 0.0, 0.0, 0.0])"),
        ("a tie between two ids", f"{A}([2.0, 1.0])", f"{A}([[0.0, 1.0, 1.0], [3.0, 1.0, 1.0]])",
         f"{A}([0.0, 1.0, 1.0])"),
        ("every score negative", f"{A}([1.0, 2.0])", f"{A}([[-3.0, -1.0, -2.0], [-1.0, -2.0, -0.5]])",
         f"{A}([-1.0, -1.0, -1.0])"),
        ("every score negative", f"{R}(3151, 4, 0.1)", f"{R}(3152, (4, 7), 0.1)", f"{R}(3153, 7, 1.0, -20.0)"),
        ("large scores", f"{R}(3161, 8, 1e4)", f"{R}(3162, (8, 10), 1e4)", f"{R}(3163, 10, 1e4)"),
        ("float32 inputs", f"{R}(3171, 6, dtype=np.float32)", f"{R}(3172, (6, 9), dtype=np.float32)",
         f"{R}(3173, 9, dtype=np.float32)"),
        ("whole-number inputs", f"{A}([2, -1, 3], int)", f"{A}([[1, 0, 2, 1], [0, 3, -1, 2], [1, 1, 0, -1]], int)",
         f"{A}([0, 1, 0, 2], int)"),
    ]
    # fmt: on
    return [_case(ref.next_token, kind, f"({h}, {W}, {b})") for kind, h, W, b in cases]


# ---------------------------------------------------------------- greedy_decode
def _prompt(seed, n, low, high):
    return [int(v) for v in np.random.default_rng(seed).integers(low, high, size=n)]


class _Greedy:
    """greedy_decode's cases as they are made: ``add`` one with the inputs given, or ``find`` a seed for one."""

    def __init__(self, extra: dict):
        self.extra = extra
        self.cases: list[Case] = []

    def add(self, kind, model, prompt, args="()", kwargs="{}"):
        more = args[1:-1].strip().rstrip(",")
        case = _case(
            ref.greedy_decode,
            kind,
            f"({model}, {prompt}{', ' + more if more else ''})",
            kwargs,
            self.extra,
            watch=1,
            changed="the caller's prompt must not change",
        )
        self.cases.append(case)
        return case.want

    def find(self, kind, n_tokens, plen, eos, want_eos, max_new=6, base=3300, **opts):
        """A seed whose reading ends (or does not end) with eos, so both kinds of case are there."""
        opt_src = "".join(f", {k}={v!r}" for k, v in opts.items())
        for seed in range(base, base + 400):
            prompt = _prompt(seed + 7, plen, 2, n_tokens)
            prompt = [t for t in prompt if t != eos] or [2 if eos != 2 else 3]
            m = g.score_model(seed, n_tokens, **opts)
            out = ref.greedy_decode(m, prompt, eos=eos, max_new=max_new)
            if (out[-1] == eos) == want_eos and len(out) > len(prompt):
                return self.add(
                    kind,
                    f"M({seed}, {n_tokens}{opt_src})",
                    repr(prompt),
                    "()",
                    f"{{'eos': {eos}, 'max_new': {max_new}}}",
                )
        raise RuntimeError(f"no seed for {kind}")


def greedy_cases():
    c = _Greedy(kernel_names("greedy_decode"))  # read_60, M, ints: torch, only when the cases are worked out
    find, add = c.find, c.add
    for plen in range(1, 9):  # prompts of every length, ending with eos and not
        find("random score tables, prompts of every length", 10, plen, 1, plen % 2 == 1, base=3300 + 100 * plen)
    find("an eos other than 1", 9, 3, 7, True, base=4100)
    find("an eos other than 1", 12, 4, 11, True, base=4200)
    find("an eos other than 1", 12, 2, 0, True, base=4300)
    for i, mn in enumerate((6, 3, 10)):
        add(
            "a model that never picks eos",
            f"M({4400 + i}, 8, eos=1, never_eos=True)",
            repr(_prompt(4410 + i, 3, 2, 8)),
            "()",
            f"{{'eos': 1, 'max_new': {mn}}}",
        )
    add("max_new = 0", "M(4501, 8)", "[3, 4, 5]", "()", "{'eos': 1, 'max_new': 0}")
    add("max_new = 0", "read_60", "task.prompt(427)", "()", "{'eos': 1, 'max_new': 0}")
    find("max_new = 1", 8, 3, 1, False, max_new=1, base=4600)
    find("max_new = 1", 8, 2, 1, True, max_new=1, base=4700)
    find("ties in the scores", 6, 3, 1, True, base=4800, ties=True)
    find("ties in the scores", 6, 4, 1, False, base=4900, ties=True)
    find("ties in the scores", 5, 2, 1, False, base=5000, ties=True)
    find("large scores", 9, 3, 1, True, base=5100, scale=1e6)
    add("the default eos=1 and max_new=6", "M(5201, 10)", "[4, 9]")
    add("the default eos=1 and max_new=6", "read_60", "task.prompt(531)")
    add("eos and max_new given by position", "M(5301, 9, eos=4, never_eos=True)", "[2, 3]", "(4, 5)")
    add("eos and max_new given by position", "read_60", "task.prompt(76)", "(1, 6)")
    add("a prompt of NumPy ints", "M(5401, 8)", "ints([2, 5, 3])", "()", "{'eos': 1, 'max_new': 6}")
    add("a prompt of NumPy ints", "read_60", "ints(task.prompt(908))", "()", "{'eos': 1, 'max_new': 6}")
    _, held_out = task.split()
    for n in (held_out[3], held_out[40], held_out[77], 896, 0, 100):
        add("the trained model reading a number", "read_60", f"task.prompt({n})")
    add("the trained model cut short by max_new", "read_60", "task.prompt(777)", "()", "{'eos': 1, 'max_new': 3}")
    return c.cases


# ---------------------------------------------------------------- make_xy
def make_xy_cases():
    cases = []

    def add(kind, seq, args="()", kwargs="{}"):
        more = args[1:-1].strip().rstrip(",")
        cases.append(
            _case(
                ref.make_xy,
                kind,
                f"({seq}, {more})" if more else f"({seq},)",
                kwargs,
                {"ints": g.numpy_ints},
                watch=0,
                changed="the caller's sequence must not change",
            )
        )

    for n in (0, 3, 9):
        add("a one-digit number", f"task.sequence({n})")
    for n in (10, 17, 40, 58):
        add("a two-digit number", f"task.sequence({n})")
    for n in (100, 110, 316, 800, 999):
        add("a three-digit number", f"task.sequence({n})")
    add("a pad other than 0", "task.sequence(64)", "()", "{'pad': 99}")
    add("a pad other than 0", "task.sequence(705)", "()", "{'pad': -7}")
    add("an eq other than 12", "[8, 2, 9, 3, 1]", "()", "{'eq': 2, 'pad': 0}")
    add("an eq other than 12", "[12, 4, 0, 5, 6, 7, 12]", "()", "{'eq': 0, 'pad': 12}")
    add("the copy task", "task.copy_sequence(58)")
    add("the copy task", "task.copy_sequence(7)")
    add("the copy task", "task.copy_sequence(444)")
    add("a list of NumPy ints", "ints(task.sequence(271))")
    add("eq and pad given by position", "task.sequence(93)", "(12, 5)")
    return cases


# ---------------------------------------------------------------- masked_loss
def _targets(seed, n, v, pad, share_pad=0.4, none_pad=False, one=False):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, v, size=n)
    if none_pad:
        t = np.where(t == pad, (pad + 1) % v, t)
    else:
        is_pad = rng.random(n) < share_pad
        t = np.where(is_pad, pad, t)
        if one:
            t[:] = pad
            t[int(rng.integers(0, n))] = (pad + 2) % v
        if (t != pad).sum() == 0:
            t[0] = (pad + 1) % v
    return [int(v_) for v_ in t]


def masked_loss_cases():
    cases = []

    def add(kind, logits, targets, kwargs="{}", rel=1e-6, env=None):
        case = _case(ref.masked_loss, kind, f"({logits}, {targets})", kwargs, env, rel=rel)
        assert np.isfinite(case.want)
        cases.append(case)

    shapes = [(8, 42), (5, 7), (20, 11), (3, 4)]
    for i, (n, v) in enumerate(shapes):
        add(
            "random logits, some targets PAD",
            f"g.random_array({6100 + i}, ({n}, {v}), 2.0)",
            f"g.array({_targets(6200 + i, n, v, 0)}, int)",
        )
    add(
        "no target is PAD",
        "g.random_array(6301, (6, 9), 1.5)",
        f"g.array({_targets(6302, 6, 9, 0, none_pad=True)}, int)",
    )
    add("only one target counts", "g.random_array(6311, (7, 5))", f"g.array({_targets(6312, 7, 5, 0, one=True)}, int)")
    add(
        "a pad other than 0 (target 0 counts)",
        "g.random_array(6401, (9, 6))",
        f"g.array({_targets(6402, 9, 6, 3)}, int)",
        "{'pad': 3}",
    )
    add(
        "a pad other than 0 (target 0 counts)",
        "g.random_array(6411, (6, 8), 3.0)",
        "g.array([0, 7, 0, 5, 7, 1], int)",
        "{'pad': 7}",
    )
    add(
        "large logits (around 1000)",
        "g.random_array(6501, (6, 10), 40.0, 1000.0)",
        f"g.array({_targets(6502, 6, 10, 0)}, int)",
    )
    add("large logits (around 1000)", "g.random_array(6511, (4, 5), 5.0, -900.0)", "g.array([2, 0, 4, 1], int)")
    add("logits far apart", "g.random_array(6601, (5, 6), 60.0)", f"g.array({_targets(6602, 5, 6, 0)}, int)")
    add("targets of dtype int32", "g.random_array(6701, (6, 7))", f"g.array({_targets(6702, 6, 7, 0)}, np.int32)")
    env = kernel_names("masked_loss")  # batch_y
    add(
        "the targets of the batch 0…63 with float32 logits (320, 42)",
        "g.random_array(6801, (320, 42), 4.0, dtype=np.float32)",
        "batch_y",
        "{'pad': 0}",
        1e-5,
        env,
    )
    return cases


# ---------------------------------------------------------------- the cells
CASES = {
    "next_token": next_token_cases,
    "greedy_decode": greedy_cases,
    "make_xy": make_xy_cases,
    "masked_loss": masked_loss_cases,
    "sample_next": sample_cases,
    "cached_attention": cached_attention_cases,
    "layer_norm": layer_norm_cases,
    "multi_head_attention": multi_head_attention_cases,
    "decoder_block": decoder_block_cases,
    "forward": forward_cases,
}
