"""Running a notebook top to bottom in a fresh kernel, as the lecture build, the tests and the
benchmarks do (autograding runs notebooks through nbgrader instead: ``execute.py``)."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from ...envflags import NBGRADER_EXECUTION, YOUR_MODEL_DIR
from ..layout import checkout_env


def kernel_env(**extra: str) -> dict[str, str]:
    """The kernel's environment: ``layout.checkout_env`` (this checkout's package importable, this
    environment's programs on PATH), not under nbgrader (``NBGRADER_EXECUTION`` unset) unless
    ``extra`` sets it."""
    env = checkout_env()
    env.pop(NBGRADER_EXECUTION, None)
    env.setdefault(YOUR_MODEL_DIR, _yours_dir())  # 04 saves the student's model there, not in the notebooks' folder
    env.update(extra)
    return env


_YOURS: list[str] = []


def _yours_dir() -> str:
    """One throwaway folder per process for the models 04's training lab saves in these runs."""
    if not _YOURS:
        _YOURS.append(tempfile.mkdtemp(prefix="wt-your-model-"))
    return _YOURS[0]


def run_notebook(
    nb,
    cwd: Path,
    *,
    timeout: int = 120,
    env: dict[str, str] | None = None,
    allow_errors: bool = False,
    store_widget_state: bool = False,
    unix_sockets: bool = False,
    stderr=None,
) -> float:
    """Run every cell of ``nb`` (in place) in a fresh python3 kernel whose folder is ``cwd``;
    returns the seconds it took, the kernel's start included. A failing cell raises nbclient's
    ``CellExecutionError`` unless ``allow_errors``. ``store_widget_state``: the widgets' last
    state is saved in ``nb.metadata.widgets``. ``unix_sockets``: the kernel talks over Unix
    sockets rather than TCP ports on localhost. ``stderr``: a file for the kernel's own stderr."""
    from nbclient import NotebookClient

    options = {}
    runtime = None
    if unix_sockets:
        from jupyter_client.manager import AsyncKernelManager

        runtime = Path(tempfile.mkdtemp(prefix="wt-kernel-"))
        options["km"] = AsyncKernelManager(
            kernel_name="python3", transport="ipc", ip=str(runtime / "k"), connection_file=str(runtime / "kernel.json")
        )
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        store_widget_state=store_widget_state,
        resources={"metadata": {"path": str(cwd)}},
        **options,
    )
    start = time.perf_counter()
    try:
        client.execute(
            cleanup_kc=True,
            env=kernel_env() if env is None else env,
            cwd=str(cwd),
            **({"stderr": stderr} if stderr is not None else {}),
        )
    finally:
        if runtime is not None:
            if options["km"].has_kernel:
                options["km"].shutdown_kernel(now=True)
            shutil.rmtree(runtime, ignore_errors=True)
    return time.perf_counter() - start
