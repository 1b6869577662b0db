"""What ``pip install`` of the students' package gives holds no NumPy forward pass (issue 41).

The handout (``make handout``) is built, then pip builds its wheel as ``pip install`` of the handout does; the
wheel (every file pip would install) is read: no ``course/`` (the answers), not the NumPy model the package once
had, no module-level function named as one of 02's exercises or computing a LayerNorm's normalisation, and no
solution cell's code however renamed or reformatted (``test_handout``'s solution finder). tests/test_handout.py
checks the handout's files and calls every function of its package against the hidden tests; this checks what an
install delivers.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile

import pytest
from test_handout import holds_solution, solution_bodies

from whole_transformer.course.layout import Course
from whole_transformer.course.publish import handout as handout_mod

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("handout")]
FORWARD = ("layer_norm", "multi_head_attention", "decoder_block", "forward")


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory) -> dict[str, bytes]:
    from simclass.minicourse import REPO

    root = tmp_path_factory.mktemp("wheel")
    built = handout_mod.handout(Course.here(REPO), root / "handout", log=lambda *_: None)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"), "."],
        cwd=built,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (wheel,) = (root / "dist").glob("whole_transformer-*.whl")
    with zipfile.ZipFile(wheel) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_the_wheel_holds_the_students_package_and_no_answers(wheel_files):
    names = sorted(wheel_files)
    assert "whole_transformer/steps.py" in names and "whole_transformer/weights.py" in names, names
    assert any(n.startswith("whole_transformer/checkpoints/") for n in names), names
    assert not [n for n in names if "/course/" in n or n.endswith("numpy_model.py")], names


def test_no_module_of_the_wheel_computes_a_layer_norm_an_attention_a_block_or_a_forward_pass(wheel_files):
    solutions = {ex: body for ex, body in solution_bodies().items() if ex in FORWARD}
    checked = 0
    for name, data in wheel_files.items():
        if not name.endswith(".py"):
            continue
        text = data.decode("utf-8")
        tree = ast.parse(text)
        top = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        assert not set(top) & {*FORWARD, "_layer_norm", "_attention", "positions"}, (name, top)
        assert "np.sqrt(var" not in text and "np.tri(" not in text, name
        assert holds_solution(text, solutions) == [], name
        checked += 1
    assert checked > 20, checked
