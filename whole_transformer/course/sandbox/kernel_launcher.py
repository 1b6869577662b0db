"""The first thing a fresh sandboxed Python runs: resource limits, then ipykernel.

Run as ``python -c <programs.source("kernel_launcher")> -f CONNECTION_FILE`` inside bubblewrap.
"""

import sys

from whole_transformer.course.sandbox.limits import env_limits, no_core_dumps  # sandbox: inlined


def main() -> None:
    env_limits()
    no_core_dumps()
    sys.argv = ["ipykernel_launcher"] + sys.argv[1:]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
