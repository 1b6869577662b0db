"""nbgrader's Execute step, made to survive hostile notebooks and to run them in the sandbox.

Plain nbgrader 0.9.6 gives up on a whole submission when the kernel dies (``os._exit``, a crash,
the out-of-memory killer) or cannot be interrupted (a loop that swallows KeyboardInterrupt), and
the student then exports as 0.0 like a real zero. ``SandboxExecute`` instead:

- starts the kernel with ``SandboxedKernelManager`` (``sandbox/bubblewrap.py``), unless the
  instructor opted out with the course's ``--no-sandbox`` (which sets ``sandbox`` to False here);
- on a cell timeout interrupts the kernel; if the kernel does not come back within
  ``iopub_timeout`` seconds it is killed;
- when the kernel died or was killed, gives that cell an error output saying what happened,
  starts a new kernel, silently runs again the cells that had run before (their outputs are
  kept from the first run), and goes on with the next cell, so later exercises are still graded;
- bounds the whole notebook (``notebook_timeout``) and the number of restarts, marking cells it
  could not run with a ``NotRun`` error (a test cell left unrun gets no points and is reported);
- caps the number and size of outputs of one cell;
- keeps what happened to every graded cell (``ok``, ``timeout``, ``died``, ``not-run``) and a list of
  events in the notebook's resources, for ``run_result.RunResult`` to hand back with the run's result (the
  course turns them into statuses and integrity findings).

It is registered in ``nbgrader_config.py`` in place of nbgrader's Execute in
``Autograde.autograde_preprocessors``, so ``nbgrader autograde`` run by hand is sandboxed too.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
from pathlib import Path
from time import monotonic

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader import utils as nbutils
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode

from ...envflags import LABS_HEADLESS
from ..cells import grade_id, is_test
from ..sandbox.bubblewrap import (
    FILE_SIZE_LIMIT,
    MEMORY_LIMIT,
    SandboxedKernelManager,
    grading_env,
    sandbox_status,
)
from ..sandbox.warm_kernels import ForkedKernelManager
from .run_result import EXECUTION


class KernelStartError(RuntimeError):
    pass


def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class SandboxExecute(Execute):
    sandbox = Bool(
        True,
        help="False runs the kernel unconfined: what the course's --no-sandbox hands to nbgrader's process "
        "(autograder/grade.py); not a setting of its own",
    ).tag(config=True)
    scratch_dir = Unicode("", help="the kernel's working folder; a fresh temporary one if empty").tag(config=True)
    notebook_timeout = Integer(300, help="seconds for all cells of one notebook, restarts included").tag(config=True)
    max_restarts = Integer(3, help="kernel restarts allowed in one notebook").tag(config=True)
    max_outputs = Integer(200, help="outputs kept per cell").tag(config=True)
    max_output_bytes = Integer(2_000_000, help="bytes of output kept per cell").tag(config=True)
    memory_limit = Integer(MEMORY_LIMIT, help="address-space limit of the kernel, bytes").tag(config=True)
    file_size_limit = Integer(FILE_SIZE_LIMIT, help="largest file the kernel may write, bytes").tag(config=True)
    threads = Integer(1, help="threads for NumPy/PyTorch in the kernel").tag(config=True)
    warm_kernels = Bool(
        True,
        help="fork the sandboxed kernels from one process that imported the libraries "
        "once (warm_kernels.py); False starts each kernel afresh",
    ).tag(config=True)
    headless_labs = Bool(
        True,
        help="the labs build no widgets and train nothing (nothing displays them "
        "while grading; whole_transformer/labs/__init__.py)",
    ).tag(config=True)

    def __init__(self, **kw):
        super().__init__(**kw)
        self.shutdown_kernel = "immediate"

    # ------------------------------------------------------------------ kernel
    def _sandboxed(self) -> bool:
        if not self.sandbox:
            return False
        status = sandbox_status()
        if not status.ok:
            raise KernelStartError(status.message())
        return True

    def create_kernel_manager(self):
        kernel_name = self.kernel_name or self.nb.metadata.get("kernelspec", {}).get("name") or "python3"
        self.kernel_name = kernel_name
        if self._sandboxed():
            manager = ForkedKernelManager if self.warm_kernels else SandboxedKernelManager
            km = manager(kernel_name=kernel_name, config=self.config)
            self.configure_sandbox(km, str(self._scratch))
        else:
            self.log.warning("Running student code WITHOUT a sandbox (opted out).")
            km = AsyncKernelManager(kernel_name=kernel_name, config=self.config)
        self.km = km
        return km

    def configure_sandbox(self, km: SandboxedKernelManager, scratch: str) -> None:
        """What the sandboxed kernel gets: its folder, limits, threads and environment."""
        km.scratch_dir = scratch
        km.memory_limit = self.memory_limit
        km.file_size_limit = self.file_size_limit
        km.threads = self.threads
        km.extra_env = grading_env(self.headless_labs)

    async def async_start_new_kernel(self, **kwargs):
        kwargs["cwd"] = str(self._scratch)  # never the folder holding the graded notebooks
        if not isinstance(self.km, SandboxedKernelManager):  # the sandbox builds its own environment
            env = dict(kwargs.get("env") or os.environ)
            env[LABS_HEADLESS] = "1" if self.headless_labs else ""
            kwargs["env"] = env
        await super().async_start_new_kernel(**kwargs)

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        left = max(1, int(self._deadline - monotonic()))
        return left if timeout is None else min(timeout, left)

    async def _async_handle_timeout(self, timeout, cell=None):
        self._status[self._current] = "timeout"
        self._event(self._current, "timeout", f"ran over {timeout} s; the kernel was interrupted")
        return await super()._async_handle_timeout(timeout, cell)

    # ------------------------------------------------------------------ run
    def preprocess(
        self, nb: NotebookNode, resources: dict | None = None, km: AsyncKernelManager | None = None
    ) -> tuple[NotebookNode, dict]:
        from nbclient import NotebookClient

        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self._events: list[dict] = []
        self._status: dict[int, str] = {}
        self._current = -1
        self._deadline = monotonic() + self.notebook_timeout
        own_scratch = not self.scratch_dir
        self._scratch = Path(self.scratch_dir or tempfile.mkdtemp(prefix="wt-scratch-")).resolve()
        self._scratch.mkdir(parents=True, exist_ok=True)
        try:
            self._run_all(resources)
        finally:
            if own_scratch:
                shutil.rmtree(self._scratch, ignore_errors=True)
        self.set_widgets_metadata()
        self._keep_report()
        return self.nb, self.resources

    def _run_all(self, resources) -> None:
        cells = self.nb.cells
        done: list[int] = []  # code cells run to completion (with or without an error)
        start, restarts = 0, 0
        while start < len(cells):
            started = False
            try:
                with self.setup_kernel():
                    started = True
                    info = self.wait_for_reply(self.kc.kernel_info())
                    self.nb.metadata["language_info"] = info["content"]["language_info"]
                    self._replay(done)
                    for index in range(start, len(cells)):
                        if monotonic() >= self._deadline:
                            self._mark_not_run(index, "the notebook ran out of time")
                            return
                        self._current = index
                        self.preprocess_cell(cells[index], resources, index)
                        self._cap_outputs(cells[index])
                        if cells[index].cell_type == "code":
                            # a cell stopped by an interrupt is not run again after a restart
                            self._status.setdefault(index, "ok")
                            if self._status[index] == "ok":
                                done.append(index)
                return
            except _ReplayFailed as e:
                self._mark_not_run(start, str(e))
                return
            except (DeadKernelError, CellTimeoutError, KernelStartError, RuntimeError, TimeoutError) as e:
                if not started or isinstance(e, KernelStartError):
                    self._mark_not_run(start, f"the kernel could not start: {e}")
                    return
                index = self._current
                died = isinstance(e, DeadKernelError)
                kind = "died" if died else "timeout"
                what = (
                    "the kernel died while running this cell (os._exit, a crash or out of memory)"
                    if died
                    else f"the cell ran over {self.timeout} s and did not stop when interrupted; the kernel was killed"
                )
                cell = cells[index]
                cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") != "error"]
                cell.outputs.append(_error("DeadKernelError" if died else "CellTimeoutError", what))
                self._cap_outputs(cell)
                self._status[index] = kind
                self._event(index, kind, what)
                restarts += 1
                start = index + 1
                if restarts > self.max_restarts:
                    self._mark_not_run(start, f"the kernel was restarted {self.max_restarts} times already")
                    return
                self._event(index, "restarted", "a new kernel ran the cells before again and went on")

    def preprocess_cell(self, cell, resources, index):
        """Run one cell; a test cell runs outside the kernel's input history (In, _ih), so that
        later student code cannot print the hidden tests it just ran."""
        self._check_assign_resources(resources)
        cell = self.execute_cell(cell, index, store_history=not is_test(cell))
        return cell, self.resources

    def _replay(self, done: list[int]) -> None:
        """Run again, in a fresh kernel, the cells that ran before; keep their first outputs."""
        for index in done:
            if monotonic() >= self._deadline:
                raise _ReplayFailed("the notebook ran out of time while restoring the kernel")
            original = self.nb.cells[index]
            twin = copy.deepcopy(original)
            self._current = index
            try:
                self.execute_cell(twin, index, store_history=not is_test(twin))
            except (DeadKernelError, CellTimeoutError) as e:
                raise _ReplayFailed(f"cell {index} failed when run again after a restart: {e}") from None
            finally:
                self.nb.cells[index] = original

    def _mark_not_run(self, start: int, why: str) -> None:
        for index in range(start, len(self.nb.cells)):
            cell = self.nb.cells[index]
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            cell.outputs = [_error("NotRun", f"this cell was not run: {why}")]
            self._status[index] = "not-run"
        self._event(start, "not-run", why)

    def _cap_outputs(self, cell) -> None:
        if cell.cell_type != "code":
            return
        outs, size = cell.get("outputs", []), 0
        kept: list[NotebookNode] = []
        for o in outs:
            n = len(json.dumps(o, default=str))
            if len(kept) >= self.max_outputs or size + n > self.max_output_bytes:
                note = "... output truncated by the autograder ...\n"
                kept.append(NotebookNode(output_type="stream", name="stdout", text=note))
                break
            kept.append(o)
            size += n
        cell.outputs = kept

    # ------------------------------------------------------------------ report
    def _event(self, index: int, kind: str, detail: str) -> None:
        self._events.append({"cell": index, "grade_id": self._grade_id(index), "kind": kind, "detail": detail})

    def _grade_id(self, index: int):
        if 0 <= index < len(self.nb.cells):
            return grade_id(self.nb.cells[index])
        return None

    def _keep_report(self) -> None:
        """What happened to each graded cell, and the events, in the resources (``run_result.EXECUTION``)."""
        cells = {}
        for index, cell in enumerate(self.nb.cells):
            if nbutils.is_grade(cell):
                cells[cell.metadata.nbgrader["grade_id"]] = {
                    "index": index,
                    "status": self._status.get(index, "ok" if cell.cell_type == "code" else "not-code"),
                }
        self.resources[EXECUTION] = {"events": self._events, "cells": cells}


class _ReplayFailed(Exception):
    pass
