"""What the sandboxed programs (``kernel_launcher``, ``fork_server``, ``kernel_zygote``) do to themselves:
their resource limits, and a forked child's becoming an ipykernel (``run_kernel``).

Their settings come in environment variables (``spec.SandboxSpec.kernel_env`` and the fork servers set
them), read here only: ``WT_LIMIT_AS``, ``WT_LIMIT_FSIZE``, ``WT_LIMIT_NPROC`` (the limits, bytes or a
count) and ``WT_WARM_MODULES`` (the modules a fork server imports before its first kernel).

This file's text is put in front of those programs' text when they run in the sandbox, where no file
of the grading package is visible (``programs.source``); elsewhere it is an ordinary module.
"""

import os
import resource
import sys
import traceback

#: the limits' variables: address space and file size in bytes, processes a count; all start with LIMITS
LIMIT_AS, LIMIT_FSIZE, LIMIT_NPROC = "WT_LIMIT_AS", "WT_LIMIT_FSIZE", "WT_LIMIT_NPROC"
LIMITS = "WT_LIMIT_"
#: the modules a fork server or zygote imports once for all its kernels, comma-separated
WARM_MODULES_VAR = "WT_WARM_MODULES"


def limit(kind: int, value: int) -> None:
    """Lower the soft and hard limit ``kind`` to ``value`` (bytes or a count); 0 leaves it as it is."""
    if value > 0:
        soft, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, hard if hard != resource.RLIM_INFINITY else value))


def env_limit(name: str) -> int:
    """The limit the environment variable ``name`` holds (removed from the environment), or 0."""
    return int(os.environ.pop(name, "0"))


def env_limits() -> None:
    """Lower this process's limits to what the limits' variables hold (each removed from the environment)."""
    limit(resource.RLIMIT_AS, env_limit(LIMIT_AS))
    limit(resource.RLIMIT_FSIZE, env_limit(LIMIT_FSIZE))
    limit(resource.RLIMIT_NPROC, env_limit(LIMIT_NPROC))  # not enforced for root


def env_warm_modules() -> list[str]:
    """The modules ``WT_WARM_MODULES`` names (removed from the environment)."""
    return [m for m in os.environ.pop(WARM_MODULES_VAR, "").split(",") if m]


def no_core_dumps() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_kernel(prepare, connection: str) -> None:
    """In a forked child: ``prepare()`` (what it drops and limits first), then an ipykernel with the
    connection file ``connection`` (JSON text); never returns, and exits with the kernel's exit code."""
    code = 1
    try:
        prepare()
        path = f"/tmp/kernel-{os.getpid()}.json"
        with open(path, "w") as f:
            f.write(connection)
        sys.argv = ["ipykernel_launcher", "-f", path]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - whatever ends the kernel is printed, and its exit code kept
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
