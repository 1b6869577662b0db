"""A throwaway PostgreSQL cluster for the tests: ``initdb`` into a temporary folder, a Unix socket
only (no TCP port), trust authentication on it (no password on the machine), ``fsync`` off.

    with PostgresCluster.start() as pg:
        url = pg.create_database("gradebook")   # postgresql://wt@/gradebook?host=/tmp/wt-pg-.../

Debian's ``postgresql`` package puts the server under /usr/lib/postgresql/<version>/bin (not on
PATH). PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user the
package creates. ``require_postgres()`` skips a test with a message when there is no server, and
fails it instead under WT_REQUIRE_POSTGRES=1 (CI, which installs it).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def server_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def require_postgres() -> Path:
    """The folder of initdb/pg_ctl, or skip (fail under WT_REQUIRE_POSTGRES=1)."""
    where = server_bin()
    why = None
    if where is None:
        why = (
            "PostgreSQL is not installed (Debian: apt-get install postgresql): "
            "the PostgreSQL gradebook tests are skipped"
        )
    elif os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            why = "running as root and there is no 'postgres' user to run the server as"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        why = why or "the psycopg driver is not installed (make venv installs it)"
    if why:
        if os.environ.get("WT_REQUIRE_POSTGRES"):
            pytest.fail(f"WT_REQUIRE_POSTGRES is set but: {why}")
        pytest.skip(why)
    return where


class PostgresCluster:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="wt-pg-"))
        self.data = self.dir / "data"
        self.user = "wt"
        self._as = None
        if os.geteuid() == 0:  # the server refuses root: it runs as postgres, owning its folder
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            os.chmod(self.dir, 0o755)
            self._as = (pw.pw_uid, pw.pw_gid)

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        def demote():
            if self._as:
                os.setgid(self._as[1])
                os.setuid(self._as[0])

        env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
        done = subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            preexec_fn=demote,
            cwd=self.dir,
            env=env,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stdout[-1500:]} {done.stderr[-1500:]}")
        return done

    @classmethod
    def start(cls, bindir: Path | None = None) -> PostgresCluster:
        pg = cls(bindir or require_postgres())
        pg._run("initdb", "-D", str(pg.data), "-U", pg.user, "-A", "trust", "--no-sync", "-E", "UTF8")
        opts = f"-k {pg.dir} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c max_connections=200"
        pg._run("pg_ctl", "-D", str(pg.data), "-o", opts, "-l", str(pg.dir / "server.log"), "-w", "start")
        return pg

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@/{database}?host={self.dir}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(dbname="postgres", user=self.user, host=str(self.dir), autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}"')
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
