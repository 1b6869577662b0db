"""``python -m whole_transformer.course.plugins.app ARGS``: ``nbgrader ARGS`` as the course runs it,
started without the slow import ``whole_transformer.course`` leaves out (see its ``__init__``).

With ``WT_PRESTART_SANDBOX={"scratch": ..., "threads": ..., "memory": ..., ...}`` in the environment
(``autograder/nbgrader_run.py`` sets it for autograde), the fork server of the sandboxed kernels
(``warm_kernels.py``) starts while nbgrader is still importing.
"""

import sys

from ..env_vars import take_prestart_sandbox

if __name__ == "__main__":
    prestart = take_prestart_sandbox()
    if prestart:
        from ..sandbox.warm_kernels import prestart as start_fork_server

        start_fork_server(**prestart)

    from nbgrader.apps.nbgraderapp import main

    sys.exit(main())
