"""Resource limits the sandboxed programs set on themselves (``kernel_launcher``, ``fork_server``).

This file's text is put in front of those programs' text when they run in the sandbox, where no file
of the grading package is visible (``programs.source``); elsewhere it is an ordinary module.
"""

import os
import resource


def limit(kind: int, value: int) -> None:
    """Lower the soft and hard limit ``kind`` to ``value`` (bytes or a count); 0 leaves it as it is."""
    if value > 0:
        soft, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, hard if hard != resource.RLIM_INFINITY else value))


def env_limit(name: str) -> int:
    """The limit the environment variable ``name`` holds (removed from the environment), or 0."""
    return int(os.environ.pop(name, "0"))


def no_core_dumps() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
