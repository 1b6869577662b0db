"""The hidden tests of the four exercises: their cases, and the code of their test cells.

Every expected value is worked out here with the reference (whole_transformer/reference.py) and
written into the notebook as a literal, so the notebook never calls the reference. The inputs are
literals or are made in the hidden test from seeds by grading's private functions. The only cases
that use a trained model read numbers with the 60-epoch model, whose right answers do not depend
on its exact weights (it reads all 1,000 numbers right).

    python tests/implementations/hidden_tests.py          # are the notebooks' hidden tests in sync?
    python tests/implementations/hidden_tests.py --write  # rewrite them (only the hidden parts)

tests/test_exercises.py checks that the notebooks hold exactly what this module generates.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from whole_transformer import grading as g
from whole_transformer import reference as ref
from whole_transformer import task

SOURCE = Path(__file__).resolve().parents[2] / "source" / "whole-transformer"
NOTEBOOK_OF = {"next_token": "03-one-word-at-a-time.ipynb", "greedy_decode": "03-one-word-at-a-time.ipynb",
               "make_xy": "04-how-it-learned.ipynb", "masked_loss": "04-how-it-learned.ipynb"}
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n.*?### END HIDDEN TESTS", re.S)

NS = {"g": g, "np": np, "task": task}


def _ev(expr, extra=None):
    return eval(expr, {**NS, **(extra or {})})


def _loop(name, call, compare, extra_check=""):
    return f"""    failed = []
    for case in cases:
        kind, want = case[0], case[-1]
        try:
            got = {call}
        except Exception:
            got = None
        if not {compare}:
            if kind not in failed:
                failed.append(kind){extra_check}
    return failed


_failed = _hidden_{name}()
del _hidden_{name}
assert not _failed, "{name} is not right yet for: " + "; ".join(_failed)"""


# ---------------------------------------------------------------- next_token
def next_token_cases():
    R, A = "g.random_array", "g.array"
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
    out = []
    for kind, h, W, b in cases:
        want = ref.next_token(_ev(h), _ev(W), _ev(b))
        out.append((kind, h, W, b, want))
    return out


def next_token_hidden() -> str:
    lines = "\n".join(f"        ({k!r}, {h}, {W}, {b}, {w})," for k, h, W, b, w in next_token_cases())
    return f"""### BEGIN HIDDEN TESTS
def _hidden_next_token():
    from whole_transformer import grading as g
    np = g.np
    # (kind of case, h, W, b, the right id: worked out when this notebook was made)
    cases = [
{lines}
    ]
{_loop("next_token", "next_token(case[1], case[2], case[3])", "g.same_id(got, want)")}
### END HIDDEN TESTS"""


# ---------------------------------------------------------------- greedy_decode
def _prompt(seed, n, low, high):
    return [int(v) for v in np.random.default_rng(seed).integers(low, high, size=n)]


def greedy_cases():
    from whole_transformer.train import load_model

    extra = {"read_60": g.model_rows(load_model("60")), "M": g.score_model, "ints": g.numpy_ints}
    cases = []

    def add(kind, model, prompt, args="()", kwargs="{}"):
        m = _ev(model, extra)
        p = _ev(prompt, extra)
        a, kw = _ev(args), _ev(kwargs)
        want = ref.greedy_decode(m, list(p), *a, **kw)
        cases.append((kind, model, prompt, args, kwargs, want))
        return want

    def find(kind, n_tokens, plen, eos, want_eos, max_new=6, base=3300, **opts):
        """A seed whose reading ends (or does not end) with eos, so both kinds of case are there."""
        opt_src = "".join(f", {k}={v!r}" for k, v in opts.items())
        for seed in range(base, base + 400):
            prompt = _prompt(seed + 7, plen, 2, n_tokens)
            prompt = [t for t in prompt if t != eos] or [2 if eos != 2 else 3]
            m = g.score_model(seed, n_tokens, **opts)
            out = ref.greedy_decode(m, prompt, eos=eos, max_new=max_new)
            if (out[-1] == eos) == want_eos and len(out) > len(prompt):
                return add(kind, f"M({seed}, {n_tokens}{opt_src})", repr(prompt), "()",
                           f"{{'eos': {eos}, 'max_new': {max_new}}}")
        raise RuntimeError(f"no seed for {kind}")

    for plen in range(1, 9):  # prompts of every length, ending with eos and not
        find("random score tables, prompts of every length", 10, plen, 1, plen % 2 == 1, base=3300 + 100 * plen)
    find("an eos other than 1", 9, 3, 7, True, base=4100)
    find("an eos other than 1", 12, 4, 11, True, base=4200)
    find("an eos other than 1", 12, 2, 0, True, base=4300)
    for i, mn in enumerate((6, 3, 10)):
        add("a model that never picks eos", f"M({4400 + i}, 8, eos=1, never_eos=True)",
            repr(_prompt(4410 + i, 3, 2, 8)), "()", f"{{'eos': 1, 'max_new': {mn}}}")
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
    return cases


def greedy_hidden() -> str:
    cases = greedy_cases()
    lines = "\n".join(f"        ({k!r}, {m}, {p}, {a}, {kw}, {w})," for k, m, p, a, kw, w in cases)
    check_prompt = """
        elif not g.unchanged(case[2], before):
            if "the caller's prompt must not change" not in failed:
                failed.append("the caller's prompt must not change")"""
    loop = _loop("greedy_decode", "greedy_decode(case[1], case[2], *case[3], **case[4])", "g.same_ids(got, want)",
                 check_prompt)
    loop = loop.replace("        kind, want = case[0], case[-1]\n",
                        "        kind, want = case[0], case[-1]\n        before = case[2][:]\n")
    return f"""### BEGIN HIDDEN TESTS
def _hidden_greedy_decode():
    from whole_transformer import grading as g
    from whole_transformer import task
    from whole_transformer.train import load_model
    M, ints = g.score_model, g.numpy_ints
    read_60 = g.model_rows(load_model("60"))
    # (kind of case, model, prompt, more arguments, keyword arguments, the right ids:
    #  worked out when this notebook was made)
    cases = [
{lines}
    ]
{loop}
### END HIDDEN TESTS"""


# ---------------------------------------------------------------- make_xy
def make_xy_cases():
    cases = []

    def add(kind, seq, args="()", kwargs="{}"):
        s = _ev(seq, {"ints": g.numpy_ints})
        want = ref.make_xy(list(s), *_ev(args), **_ev(kwargs))
        cases.append((kind, seq, args, kwargs, want))

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


def make_xy_hidden() -> str:
    lines = "\n".join(f"        ({k!r}, {s}, {a}, {kw}, {list(w[0])!r}, {list(w[1])!r})," for k, s, a, kw, w in
                      make_xy_cases())
    check_seq = """
        elif not g.unchanged(case[1], before):
            if "the caller's sequence must not change" not in failed:
                failed.append("the caller's sequence must not change")"""
    loop = _loop("make_xy", "make_xy(case[1], *case[2], **case[3])", "g.same_pair(got, case[4], case[5])",
                 check_seq)
    loop = loop.replace("        kind, want = case[0], case[-1]\n",
                        "        kind = case[0]\n        before = case[1][:]\n")
    return f"""### BEGIN HIDDEN TESTS
def _hidden_make_xy():
    from whole_transformer import grading as g
    from whole_transformer import task
    ints = g.numpy_ints
    # (kind of case, sequence, more arguments, keyword arguments, the right x, the right y:
    #  worked out when this notebook was made)
    cases = [
{lines}
    ]
{loop}
### END HIDDEN TESTS"""


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
        L = _ev(logits, env)
        T = np.asarray(_ev(targets, env))
        want = ref.masked_loss(np.asarray(L, dtype=np.float64), T, **_ev(kwargs))
        assert np.isfinite(want)
        cases.append((kind, logits, targets, kwargs, rel, want))

    shapes = [(8, 42), (5, 7), (20, 11), (3, 4)]
    for i, (n, v) in enumerate(shapes):
        add("random logits, some targets PAD", f"g.random_array({6100 + i}, ({n}, {v}), 2.0)",
            f"g.array({_targets(6200 + i, n, v, 0)}, int)")
    add("no target is PAD", "g.random_array(6301, (6, 9), 1.5)",
        f"g.array({_targets(6302, 6, 9, 0, none_pad=True)}, int)")
    add("only one target counts", "g.random_array(6311, (7, 5))", f"g.array({_targets(6312, 7, 5, 0, one=True)}, int)")
    add("a pad other than 0 (target 0 counts)", "g.random_array(6401, (9, 6))",
        f"g.array({_targets(6402, 9, 6, 3)}, int)", "{'pad': 3}")
    add("a pad other than 0 (target 0 counts)", "g.random_array(6411, (6, 8), 3.0)",
        "g.array([0, 7, 0, 5, 7, 1], int)", "{'pad': 7}")
    add("large logits (around 1000)", "g.random_array(6501, (6, 10), 40.0, 1000.0)",
        f"g.array({_targets(6502, 6, 10, 0)}, int)")
    add("large logits (around 1000)", "g.random_array(6511, (4, 5), 5.0, -900.0)", "g.array([2, 0, 4, 1], int)")
    add("logits far apart", "g.random_array(6601, (5, 6), 60.0)", f"g.array({_targets(6602, 5, 6, 0)}, int)")
    add("targets of dtype int32", "g.random_array(6701, (6, 7))", f"g.array({_targets(6702, 6, 7, 0)}, np.int32)")
    env = {"batch_y": task.pad_rows([task.make_xy(task.sequence(n))[1] for n in range(64)]).reshape(-1)}
    add("the targets of the batch 0…63 with float32 logits (320, 42)",
        "g.random_array(6801, (320, 42), 4.0, dtype=np.float32)", "batch_y", "{'pad': 0}", 1e-5, env)
    return cases


def masked_loss_hidden() -> str:
    lines = "\n".join(f"        ({k!r}, {lg}, {t}, {kw}, {rel!r}, {w!r})," for k, lg, t, kw, rel, w in
                      masked_loss_cases())
    loop = _loop("masked_loss", "masked_loss(case[1], case[2], **case[3])", "g.close(got, want, rel=case[4])")
    return f"""### BEGIN HIDDEN TESTS
def _hidden_masked_loss():
    from whole_transformer import grading as g
    from whole_transformer import task
    np = g.np
    batch_y = task.pad_rows([task.make_xy(task.sequence(n))[1] for n in range(64)]).reshape(-1)  # (320,)
    # (kind of case, logits, targets, keyword arguments, relative tolerance, the right loss:
    #  worked out when this notebook was made)
    cases = [
{lines}
    ]
{loop}
### END HIDDEN TESTS"""


# ---------------------------------------------------------------- the notebooks
GENERATORS = {"next_token": next_token_hidden, "greedy_decode": greedy_hidden, "make_xy": make_xy_hidden,
              "masked_loss": masked_loss_hidden}


def test_cell_source(exercise: str) -> str:
    """The whole source of an exercise's graded test cell: the visible check, then the hidden tests."""
    return f'check("{exercise}")\n' + GENERATORS[exercise]()


def out_of_sync() -> list[str]:
    """The exercises whose test cell in the source notebook differs from what this module generates."""
    import nbformat

    stale = []
    for ex, name in NOTEBOOK_OF.items():
        nb = nbformat.read(SOURCE / name, as_version=4)
        (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"test_{ex}"]
        if cell.source != test_cell_source(ex):
            stale.append(ex)
    return stale


def write() -> list[str]:
    """Rewrite the exercises' test cells in the source notebooks; returns the exercises changed."""
    import nbformat

    changed = []
    for name in sorted(set(NOTEBOOK_OF.values())):
        nb = nbformat.read(SOURCE / name, as_version=4)
        for c in nb.cells:
            gid = c.metadata.get("nbgrader", {}).get("grade_id", "")
            ex = gid.removeprefix("test_")
            if gid.startswith("test_") and ex in NOTEBOOK_OF and NOTEBOOK_OF[ex] == name:
                new = test_cell_source(ex)
                if c.source != new:
                    c.source = new
                    changed.append(ex)
        nbformat.write(nb, SOURCE / name)
    return changed


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        print("rewrote:", ", ".join(write()) or "nothing")
    else:
        stale = out_of_sync()
        print("out of sync:", ", ".join(stale) if stale else "none")
        sys.exit(1 if stale else 0)
