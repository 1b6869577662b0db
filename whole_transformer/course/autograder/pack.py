"""What a grader needs of the assignment, as data (``Pack``), shipped with every student's grading task.

``make_pack`` turns the run's ``Template`` (``template.py``) into bytes and text: the gradebook that
knows the assignment, the released notebooks and the earlier releases kept, the points of every test
cell, the course's nbgrader_config.py and what it gives the sandboxed kernels, and course.toml's
``[partial_credit]``; so that a grader on another machine needs no course folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

from whole_transformer.course.answers.diagnose import partial_credit_settings

from ..layout import Course
from ..publish.release import release_history
from .template import Template


@dataclass
class Pack:
    """What a grader needs of the assignment, as data: shipped with every task (about 250 kB)."""

    db: bytes
    release: dict[str, str]  # notebook name → released notebook (JSON text)
    notebooks: list[str]
    grade_cells: dict[str, list[tuple[str, float]]]
    config: str  # the course's nbgrader_config.py
    kernels: dict | None  # warm_kernels.prestart's settings from that config; None: no warm kernels
    history: dict[str, list[str]] = field(default_factory=dict)  # notebook → earlier releases kept (oldest first)
    partial_credit: dict = field(default_factory=dict)  # course.toml's [partial_credit] (diagnose.py)


def make_pack(course: Course, template: Template) -> Pack:
    config = course.root / "nbgrader_config.py"
    history: dict[str, list[str]] = {}
    for kept in release_history(course):
        for n, text in kept.items():
            history.setdefault(n, []).append(text)
    return Pack(
        template.db.read_bytes(),
        {n: (template.release / f"{n}.ipynb").read_text(encoding="utf-8") for n in template.notebooks},
        list(template.notebooks),
        template.grade_cells,
        config.read_text(encoding="utf-8"),
        kernel_settings(config),
        history,
        partial_credit_settings(course.root),
    )


def kernel_settings(config: Path) -> dict | None:
    """What the course's nbgrader config gives the sandboxed kernels (``SandboxExecute``), as
    ``warm_kernels.prestart``'s settings, or None if it turns warm kernels off: read once here, so that
    a grader can start their fork server before nbgrader has read the config (``student.py``)."""
    from ..plugins.execute import SandboxExecute  # lazy: nbgrader and jupyter_client, for a run that makes a pack

    ex = SandboxExecute(config=PyFileConfigLoader(config.name, path=str(config.parent)).load_config())
    if not ex.warm_kernels:
        return None
    return {"memory": ex.memory_limit, "file_size": ex.file_size_limit, "headless": ex.headless_labs}
