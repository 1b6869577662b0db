"""The first thing a fresh sandboxed Python runs: resource limits, then ipykernel.

Run as ``python -c <programs.source("kernel_launcher")> -f CONNECTION_FILE`` inside bubblewrap.
"""

import resource
import sys

from whole_transformer.course.sandbox.limits import env_limit, limit, no_core_dumps  # sandbox: inlined


def main() -> None:
    limit(resource.RLIMIT_AS, env_limit("WT_LIMIT_AS"))
    limit(resource.RLIMIT_FSIZE, env_limit("WT_LIMIT_FSIZE"))
    limit(resource.RLIMIT_NPROC, env_limit("WT_LIMIT_NPROC"))  # not enforced for root
    no_core_dumps()
    sys.argv = ["ipykernel_launcher"] + sys.argv[1:]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
