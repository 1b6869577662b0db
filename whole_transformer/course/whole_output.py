"""All or nothing: a command's output folders are replaced only when the command finishes.

``replaced_whole(folders)`` moves each folder aside (``.<name>.previous-<pid>``) before the command writes
it anew; when the command raises (a refusal, a failure, Ctrl-C), what it wrote is removed and every folder
is put back as it was; when it finishes, the old folders are removed. ``make feedback`` runs in it, so a
refused run leaves the previous run's feedback/ and feedback-pages/ exactly as they were.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _aside(folder: Path) -> Path:
    return folder.with_name(f".{folder.name}.previous-{os.getpid()}")


@contextmanager
def replaced_whole(folders: list[Path]) -> Iterator[None]:
    saved: list[tuple[Path, Path | None]] = []
    for folder in folders:
        keep = _aside(folder)
        shutil.rmtree(keep, ignore_errors=True)
        if folder.exists():
            folder.rename(keep)
            saved.append((folder, keep))
        else:
            saved.append((folder, None))
    try:
        yield
    except BaseException:
        for folder, old in saved:
            shutil.rmtree(folder, ignore_errors=True)
            if old is not None:
                old.rename(folder)
        raise
    for _, old in saved:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
