"""checkdata.is_current(): any difference between the shipped data of the visible checks and what the reference
solutions and the mistake catalogue give is noticed. (That the shipped data is current is tests/test_term.py's
``test_the_repository_is_in_step``.)

Working the data out (``checkdata.build``) takes about 18 s of CPU: the tests that change only the file compare it
with one build, made once for the module (``built``); those that change what it is built from build it anew."""

from __future__ import annotations

import json

import pytest

from whole_transformer import exercise_checks as ec
from whole_transformer.course.answers import check_data as checkdata
from whole_transformer.course.answers.mistakes import MISTAKES

pytestmark = pytest.mark.package  # each test works the data out (about 18 s of CPU), or reads one such build


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """checkdata reading and writing a copy of the shipped file (the repository's stays untouched)."""
    copy = tmp_path / "exercise_checks.json"
    copy.write_text(checkdata.DATA.read_text())
    monkeypatch.setattr(checkdata, "DATA", copy)
    yield copy
    ec._data.cache_clear()


@pytest.fixture(scope="module")
def once_built() -> dict:
    return checkdata.build()


@pytest.fixture
def built(once_built, monkeypatch):
    """checkdata.build() gives what the reference and the catalogue give now, worked out once for the module."""
    monkeypatch.setattr(checkdata, "build", lambda: once_built)


def test_a_changed_hash_is_not_current(data_copy, built):
    assert checkdata.is_current()
    data = json.loads(data_copy.read_text())
    right = data["exercises"]["make_xy"]["right"]
    right[0] = "0" * len(right[0])
    data_copy.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    assert not checkdata.is_current()


def test_a_changed_hint_is_not_current(data_copy, built):
    data = json.loads(data_copy.read_text())
    data["exercises"]["masked_loss"]["mistakes"][0]["hint"] += " (edited by hand)"
    data_copy.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    assert not checkdata.is_current()


def test_a_missing_file_is_not_current(data_copy, built):
    data_copy.unlink()
    assert not checkdata.is_current()


def test_a_changed_reference_makes_the_data_stale(data_copy, monkeypatch):
    right = checkdata.REFERENCE["next_token"]

    def changed(h, W, b):  # the reference, but another id for the random case (the only one with 6 tokens)
        return right(h, W, b) if len(b) != 6 else (right(h, W, b) + 1) % 6

    monkeypatch.setitem(checkdata.REFERENCE, "next_token", changed)
    assert not checkdata.is_current()


def test_a_mistake_that_gives_the_right_results_is_refused(data_copy, monkeypatch):
    """A catalogued mistake that no case tells from the reference cannot be written as data."""
    monkeypatch.setitem(checkdata.REFERENCE, "next_token", MISTAKES["next_token"][0].code)
    with pytest.raises(AssertionError, match="gives the right results on every case"):
        checkdata.is_current()


def test_write_makes_it_current_again(data_copy, built):
    data_copy.write_text("{}\n")
    assert not checkdata.is_current()
    assert checkdata.write() == data_copy
    assert checkdata.is_current()
    assert data_copy.read_text() == ec.DATA.read_text()  # what it wrote is the shipped file
