"""``python -m whole_transformer.course.plugins.app ARGS``: ``nbgrader ARGS`` as the course runs it,
started without the slow import ``whole_transformer.course`` leaves out (see its ``__init__``).

With ``WT_PRESTART_SANDBOX={"scratch": ..., "threads": ..., "memory": ..., ...}`` in the environment
(``autograder/nbgrader_run.py`` sets it for autograde), the fork server of the sandboxed kernels
(``warm_kernels.py``) starts while nbgrader is still importing.

Every run, started afresh or forked from the warm nbgrader (``autograder/warm_nbgrader.py``), checks
nbgrader's cell-metadata schema once rather than once per cell (``SchemaCheckedOnce``), and a run that makes
a new gradebook reads the head of nbgrader's schema migrations in its own process (``gradebook.nbgrader_api``).
"""

import json
import sys

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


def nbgrader_main(args: list[str]) -> int:
    """``nbgrader ARGS`` in this process, its exit code."""
    # lazy: nbgrader as the run starts (the warm nbgrader preloaded it), never in a process that only imports this
    from nbgrader.apps.nbgraderapp import main
    from nbgrader.nbgraderformat import common

    from ..gradebook import nbgrader_api  # lazy: with nbgrader, as the run starts

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
