"""Who is being graded by which autograde run, so that two runs on one course share the class.

A student is claimed before grading and until merged. With a PostgreSQL gradebook a claim is a
session advisory lock (released by the server if the process dies); with SQLite, a lock file per
student under ``autograde/.wt/claims/`` (flock, released by the kernel if the process dies).
"""

from __future__ import annotations

import fcntl
import hashlib
from typing import TextIO

from ..layout import ASSIGNMENT, Course


def _lock_key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{ASSIGNMENT}:{name}".encode()).digest()[:8], "big", signed=True)


class Claims:
    """Who is being graded by this run (see the module doc)."""

    def __init__(self, course: Course):
        self.course = course
        self.held: dict[str, TextIO | bool] = {}  # student → their lock file (SQLite), or True (an advisory lock)
        self._lock_files: dict[str, TextIO] = {}  # lock(name) → its file (SQLite)
        self._con = None
        if not course.sqlite:
            from sqlalchemy import create_engine  # lazy: sqlalchemy only for a PostgreSQL gradebook
            from sqlalchemy.pool import NullPool  # lazy: as above

            self._engine = create_engine(course.db_url, poolclass=NullPool)
            self._con = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        else:
            (course.state / "claims").mkdir(parents=True, exist_ok=True)

    def _sql(self, query: str, key: int):
        from sqlalchemy import text  # lazy: sqlalchemy only for a PostgreSQL gradebook

        assert self._con is not None, "only a PostgreSQL gradebook's claims run SQL"
        return self._con.execute(text(query), {"k": key}).scalar()

    def lock(self, name: str) -> None:
        """Wait for a lock shared by every run on this course (preparing the gradebook)."""
        if self._con is not None:
            self._sql("select pg_advisory_lock(:k)", _lock_key(f"lock:{name}"))
        else:
            f = open(self.course.state / "claims" / f".{name}.lock", "a")
            fcntl.flock(f, fcntl.LOCK_EX)
            self._lock_files[name] = f

    def unlock(self, name: str) -> None:
        if self._con is not None:
            self._sql("select pg_advisory_unlock(:k)", _lock_key(f"lock:{name}"))
        else:
            f = self._lock_files.pop(name, None)
            if f is not None:
                f.close()

    def claim(self, student: str) -> bool:
        if self._con is not None:
            got = bool(self._sql("select pg_try_advisory_lock(:k)", _lock_key(f"student:{student}")))
            if got:
                self.held[student] = True
            return got
        f = open(self.course.state / "claims" / f"{student}.lock", "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            return False
        self.held[student] = f
        return True

    def unclaim(self, student: str) -> None:
        held = self.held.pop(student, None)
        if held is None:
            return
        if isinstance(held, bool):  # PostgreSQL: True for a session advisory lock
            self._sql("select pg_advisory_unlock(:k)", _lock_key(f"student:{student}"))
        else:
            held.close()

    def close(self) -> None:
        for s in list(self.held):
            try:
                self.unclaim(s)
            except Exception:  # noqa: BLE001 - closing the connection releases them anyway
                pass
        for f in self._lock_files.values():
            f.close()
        self.held.clear()
        self._lock_files.clear()
        if self._con is not None:
            self._con.close()
            self._engine.dispose()
            self._con = None
