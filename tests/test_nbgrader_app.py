"""nbgrader as the course runs it (whole_transformer/course/plugins/app.py): its two shortcuts give what nbgrader's own
ways give. nbgrader's cell-metadata schema, checked once per run (``SchemaCheckedOnce``), passes and refuses the same
metadata with the same error as ``jsonschema.validate`` for each cell; the head of nbgrader's gradebook migrations, read
in the run's own process (``gradebook.alembic_head``), is the one ``alembic heads`` prints for nbgrader."""

from __future__ import annotations

import os
import sys

import jsonschema
import pytest
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

from whole_transformer.course.gradebook import alembic_head
from whole_transformer.course.plugins.app import SchemaCheckedOnce

RIGHT = {"grade": True, "solution": True, "locked": False, "grade_id": "ex1", "points": 2, "schema_version": 3}
WRONG = [
    {**RIGHT, "points": "two"},  # a number as a word
    {**RIGHT, "grade_id": 7},  # an id that is not a string
    {k: v for k, v in RIGHT.items() if k != "grade"},  # a required key missing
    {**RIGHT, "locked": "no"},
]


def _error(validate, metadata, schema) -> str | None:
    try:
        validate(metadata, schema)
    except jsonschema.ValidationError as e:
        return f"{type(e).__name__}: {e}"
    return None


def test_the_schema_checked_once_passes_and_refuses_what_jsonschema_does():
    schema = MetadataValidatorV3().schema
    once = SchemaCheckedOnce()
    assert _error(once.validate, RIGHT, schema) is None and _error(jsonschema.validate, RIGHT, schema) is None
    for metadata in WRONG * 2:  # twice: the second time from the validator kept for the schema
        theirs = _error(jsonschema.validate, metadata, schema)
        assert theirs is not None, metadata
        assert _error(once.validate, metadata, schema) == theirs
    assert len(once.validators) == 1
    assert once.ValidationError is jsonschema.ValidationError  # the rest of jsonschema as it is


@pytest.mark.package  # nbgrader's own way starts `alembic heads`, a new Python
def test_the_migrations_head_read_in_process_is_the_one_alembic_heads_prints(monkeypatch):
    from nbgrader.api import get_alembic_version

    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    assert alembic_head() == get_alembic_version()
