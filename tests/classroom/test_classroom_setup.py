"""The parts of ``make classroom`` that need no root and no browser (the whole term: test_classroom.py)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from whole_transformer.course import classroom


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
        assert not classroom._everyone_can_run(exe)
        base.chmod(0o755)
        assert classroom._everyone_can_run(exe)
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
