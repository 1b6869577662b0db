"""``python -m whole_transformer.course.plugins.app ARGS``: ``nbgrader ARGS`` as the course runs it,
started without the slow import ``whole_transformer.course`` leaves out (see its ``__init__``).

With ``WT_PRESTART_SANDBOX={"scratch": ..., "threads": ..., "memory": ..., ...}`` in the environment
(``autograder/nbgrader_run.py`` sets it for autograde), the fork server of the sandboxed kernels
(``warm_kernels.py``) starts while nbgrader is still importing.

Every run, started afresh or forked from the warm nbgrader (``autograder/warm_nbgrader.py``), checks
nbgrader's cell-metadata schema once rather than once per cell (``SchemaCheckedOnce``), and a run that makes
a new gradebook reads the head of nbgrader's schema migrations in its own process (``gradebook.nbgrader_api``).

``autograde`` and ``generate_feedback`` refuse to start when the settings nbgrader read lack the course's
preprocessors (``REQUIRED``): nbgrader skips a ``load_subconfig`` whose file is gone, or a config file that raises,
and would then grade with its own defaults (no sandbox). ``check_course_config`` makes the same check for the
instructor's commands before they start anything.
"""

import json
import sys
from pathlib import Path

from ..env_vars import take_prestart_sandbox


class SchemaCheckedOnce:
    """``jsonschema`` as nbgrader's cell-metadata validator calls it (``jsonschema.validate(metadata, schema)``
    for every cell), with nbgrader's constant schema checked against the metaschema once per run rather
    than once per cell (a seventh of a run's CPU); the same validation, the same errors."""

    def __init__(self):
        import jsonschema  # lazy: as nbgrader starts (the warm nbgrader preloaded it)

        self.jsonschema, self.validators = jsonschema, {}

    def validate(self, instance, schema) -> None:
        key = json.dumps(schema, sort_keys=True)
        validator = self.validators.get(key)
        if validator is None:
            cls = self.jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validator = self.validators[key] = cls(schema)
        error = self.jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name):
        return getattr(self.jsonschema, name)


#: What two of nbgrader's commands cannot run without, as the course's nbgrader_config.py lists them: the command →
#: (its converter, the converter's list of preprocessors, the preprocessors it must hold). Without them ``autograde``
#: runs student code unsandboxed, hands the kernel the expected values and judges nothing itself, and
#: ``generate_feedback`` shows students the hidden tests.
REQUIRED = {
    "autograde": (
        "nbgrader.converters.autograde.Autograde",
        "autograde_preprocessors",
        (
            "whole_transformer.course.plugins.verdict.HoldExpected",
            "whole_transformer.course.plugins.execute.SandboxExecute",
            "whole_transformer.course.plugins.verdict.Verdict",
        ),
    ),
    "generate_feedback": (
        "nbgrader.converters.generate_feedback.GenerateFeedback",
        "preprocessors",
        # MakeInert is one of two walls against a student's scripts (the pages' Content-Security-Policy is the other,
        # and tests/e2e/test_e2e_safe_to_open.py shows each alone stops them): not required here
        ("whole_transformer.course.plugins.hide_tests.HideHiddenTests",),
    ),
}


def missing_preprocessors(command: str, listed) -> list[str]:
    """The names of what ``command`` must run with (``REQUIRED``) that nothing ``listed`` (classes, or their import
    strings, as nbgrader takes them) is or extends."""
    from traitlets.utils.importstring import import_item  # lazy: with nbgrader, as the run starts

    have = [import_item(p) if isinstance(p, str) else p for p in listed]
    return [
        name.rsplit(".", 1)[1]
        for name in REQUIRED[command][2]
        if not any(isinstance(h, type) and issubclass(h, import_item(name)) for h in have)
    ]


def refusal(command: str, missing: list[str], read: str = "the settings nbgrader read") -> str:
    """Why ``command`` cannot run when ``read`` (the configuration) lacks ``missing``, and what to do."""
    converter, listed, _ = REQUIRED[command]
    harm = (
        "student code would run outside the sandbox and see the expected values"
        if command == "autograde"
        else "students would read the hidden tests"
    )
    return (
        f"{read} do not list {', '.join(missing)} in c.{converter.rsplit('.', 1)[1]}.{listed}, which the course's "
        f"nbgrader_config.py sets (without them {harm}). Check the course's nbgrader_config.py, and that every file "
        "it names in load_subconfig(...) exists: nbgrader skips one that does not without a word"
    )


def course_config_lacks(root: Path | str, command: str) -> list[str]:
    """What ``command`` must run with (``REQUIRED``) that the nbgrader_config.py of the course folder ``root``, read as
    nbgrader reads it (``layout.nbgrader_config``), does not list; all of it if there is no such file."""
    from ..layout import configured, nbgrader_config  # lazy: only the commands that grade read the course's settings

    converter, listed, _ = REQUIRED[command]
    return missing_preprocessors(command, configured(nbgrader_config(root), converter.rsplit(".", 1)[1], listed, []))


def check_course_config(root: Path | str, command: str, said: str) -> None:
    """A ValueError ("``said`` refused: …") if the nbgrader_config.py of the course folder ``root`` lacks what
    ``command`` must run with: the instructor's commands stop before any student code runs."""
    lacks = course_config_lacks(root, command)
    if lacks:
        read = f"the settings nbgrader reads from {root}/nbgrader_config.py"
        raise ValueError(f"{said} refused: {refusal(command, lacks, read)}")


def _refuse_without_the_courses_preprocessors(command: str) -> None:
    """``command``'s converter, if ``REQUIRED`` names it, refusing to start without what it must run with."""
    from nbgrader.converters.base import NbGraderException
    from traitlets.utils.importstring import import_item

    converter, listed, _ = REQUIRED[command]
    cls = import_item(converter)
    start = cls.start

    def start_checked(self) -> None:
        missing = missing_preprocessors(command, getattr(self, listed))
        if missing:
            said = f"nbgrader {command} refused: {refusal(command, missing)}"
            self.log.error(said)
            raise NbGraderException(said)
        start(self)

    cls.start = start_checked


def nbgrader_main(args: list[str]) -> int:
    """``nbgrader ARGS`` in this process, its exit code. ``autograde`` and ``generate_feedback`` refuse to run
    without the course's preprocessors (``REQUIRED``)."""
    # lazy: nbgrader as the run starts (the warm nbgrader preloaded it), never in a process that only imports this
    from nbgrader.apps.nbgraderapp import main
    from nbgrader.nbgraderformat import common

    from ..gradebook import nbgrader_api  # lazy: with nbgrader, as the run starts

    if args and args[0] in REQUIRED:
        _refuse_without_the_courses_preprocessors(args[0])
    common.jsonschema = SchemaCheckedOnce()
    nbgrader_api()  # a gradebook the run makes is stamped without a new `alembic heads`
    sys.argv = ["nbgrader", *args]
    return main() or 0


if __name__ == "__main__":
    prestart = take_prestart_sandbox()
    if prestart:
        from ..sandbox.warm_kernels import prestart as start_fork_server

        start_fork_server(**prestart)

    sys.exit(nbgrader_main(sys.argv[1:]))
