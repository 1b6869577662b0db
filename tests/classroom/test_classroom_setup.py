"""The parts of ``make classroom`` that need no root and no browser (the whole term: test_classroom.py)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from whole_transformer.course.classroom import env as classroom_env
from whole_transformer.course.classroom import hub as classroom


def test_without_root_it_says_so_and_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(classroom.ClassroomError) as err:
        classroom.up(tmp_path / "room")
    assert "needs root" in str(err.value) and "sudo make classroom" in str(err.value)
    assert not (tmp_path / "room").exists()
    assert classroom.main(["up", "--dir", str(tmp_path / "room")]) == 2


def test_a_python_under_a_closed_folder_is_not_used_for_students():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="wt-python-"))  # mkdtemp makes it 0700
    try:
        exe = base / "python3"
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
        assert stat.S_IMODE(base.stat().st_mode) == 0o700
        assert not classroom_env.everyone_can_run(exe)
        base.chmod(0o755)
        assert classroom_env.everyone_can_run(exe)
    finally:
        shutil.rmtree(base)


def test_stop_without_a_classroom_touches_nothing(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    classroom.down(tmp_path, log=lambda *a: None)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_up_refuses_a_folder_that_is_not_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (tmp_path / "keep.txt").write_text("mine")
    proxy = tmp_path / "chp"
    proxy.write_text("")
    with pytest.raises(classroom.ClassroomError, match="not empty"):
        classroom.up(tmp_path, proxy=proxy)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chp", "keep.txt"]


def test_the_students_environment_takes_installed_packages_and_starts_its_own_python(tmp_path):
    """seed_env puts an installed distribution (tqdm here) into a new venv: importable there, and its
    console script runs the new venv's Python, not this one's."""
    import subprocess
    import sys

    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", env], check=True)
    dists = classroom_env.installed_closure(["tqdm", "no-such-distribution-here==1"])
    assert [d.metadata["Name"] for d in dists] == ["tqdm"]
    assert classroom_env.seed_env(env, dists) == 1
    script = (env / "bin" / "tqdm").read_text()
    assert script.startswith(f"#!{env / 'bin' / 'python'}\n") and sys.prefix not in script
    out = subprocess.run([env / "bin" / "python", "-c", "import sys, tqdm; print(sys.prefix, tqdm.__file__)"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == str(env) and out[1].startswith(str(env / "lib")), out
    version = subprocess.run([env / "bin" / "tqdm", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == dists[0].version


def test_a_package_the_students_python_is_too_old_for_is_left_to_pip():
    """Requires-Python is read against the students' Python, to the patch release (soupsieve 4.1.3 needs
    3.11.5: linked into a venv of Debian's 3.11.2 it broke the Formgrader's pages)."""
    from packaging.markers import default_environment

    assert classroom_env.installed_closure(["tqdm"]) != []
    old = {**default_environment(), "python_full_version": "3.6.0", "python_version": "3.6"}
    assert classroom_env.installed_closure(["tqdm"], old) == []
