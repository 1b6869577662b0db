"""Where things are in the course folder (nbgrader's layout), and the names others rely on."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from . import env_vars

#: the nbgrader assignment: source/<ASSIGNMENT>/, release/<ASSIGNMENT>/, submitted/<student>/<ASSIGNMENT>/
ASSIGNMENT = "whole-transformer"
COURSE_ID = ASSIGNMENT  # the course is named after its one assignment
#: The notebook of each exercise; the solution cell's grade_id is the exercise's name and its
#: graded test cell's grade_id is test_<exercise>.
NOTEBOOK_OF = {
    "next_token": "03-one-word-at-a-time.ipynb",
    "greedy_decode": "03-one-word-at-a-time.ipynb",
    "make_xy": "04-how-it-learned.ipynb",
    "masked_loss": "04-how-it-learned.ipynb",
    "cached_attention": "03-one-word-at-a-time.ipynb",
    "sample_next": "03-one-word-at-a-time.ipynb",
    "layer_norm": "02-microscope.ipynb",
    "multi_head_attention": "02-microscope.ipynb",
    "decoder_block": "02-microscope.ipynb",
    "forward": "02-microscope.ipynb",
}
REPO = Path(__file__).resolve().parents[2]


def _under(*parts: str, doc: str) -> property:
    """A path under the course's root, as a read-only attribute."""
    return property(lambda course: course.root.joinpath(*parts), doc=doc)


@dataclass(frozen=True)
class Course:
    root: Path

    @classmethod
    def here(cls, root: str | os.PathLike | None = None) -> Course:
        root = Path(root or env_vars.course_root() or Path.cwd()).resolve()
        if not (root / "nbgrader_config.py").is_file():
            raise ValueError(
                f"{root} is not the course folder (no nbgrader_config.py there): run the command from the top "
                "of the course (where the Makefile is), or pass --root"
            )
        return cls(root)

    # nbgrader's folders (nbgrader_config.py names the same ones)
    source = _under("source", ASSIGNMENT, doc="the notebooks with solutions and hidden tests")
    release = _under("release", ASSIGNMENT, doc="what students get")
    submitted = _under("submitted", doc="submitted/<student>/<ASSIGNMENT>/: what students hand in")
    autograde = _under("autograde", doc="graded notebooks, autograde/<student>/<ASSIGNMENT>/")
    feedback = _under("feedback", doc="feedback HTML, feedback/<student>/<ASSIGNMENT>/")
    lecture = _under("notebooks", doc="the lecture edition")
    gradebook = _under("gradebook.db", doc="the gradebook, when it is nbgrader's SQLite file")
    state = _under("autograde", ".wt", doc="the course runner's own records: one JSON per graded student, work folders")

    @property
    def db_url(self) -> str:
        """The gradebook's URL as nbgrader sees it: ``c.CourseDirectory.db_url`` of the course's
        nbgrader_config.py (which reads ``DB_URL``), else nbgrader's default, gradebook.db here."""
        return configured_db_url(self.root, env_vars.db_url())

    @property
    def sqlite(self) -> bool:
        """True when the gradebook is a SQLite file (then it is ``self.gradebook``)."""
        return self.db_url.startswith("sqlite")

    def students(self) -> list[str]:
        if not self.submitted.is_dir():
            return []
        return sorted(p.name for p in self.submitted.iterdir() if p.is_dir() and not p.name.startswith("."))


def nbgrader_config(root: Path | str):
    """The settings of the nbgrader_config.py in the folder ``root``, as traitlets reads the file (its
    ``load_subconfig`` calls included; a file they name that is missing is skipped, as nbgrader skips it); an empty
    ``Config`` if there is no such file. The file runs in this process's working folder (the course's config
    reads course.toml there when that folder has one, else beside itself); this process's ``sys.path`` is left as
    it was (the course's file puts its folder first, for nbgrader's processes)."""
    from traitlets.config.loader import Config, PyFileConfigLoader  # lazy: traitlets only where a setting is read

    if not (Path(root) / "nbgrader_config.py").is_file():
        return Config()
    path = list(sys.path)
    try:
        return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    finally:
        sys.path[:] = path


def configured(config, section: str, name: str, default=None):
    """``c.<section>.<name>`` of a ``Config``, or ``default`` if it is not set."""
    return config[section].get(name, default) if section in config else default


@functools.lru_cache(maxsize=16)
def configured_db_url(root: Path, db_url_env: str = "") -> str:
    """``c.CourseDirectory.db_url`` as the course's nbgrader_config.py sets it (cached per root and
    DB_URL), else ``sqlite:///<root>/gradebook.db`` (nbgrader's default)."""
    url = configured(nbgrader_config(root), "CourseDirectory", "db_url")
    return str(url) if url else f"sqlite:///{root / 'gradebook.db'}"


def exchange_root(course: Course, given: str | None) -> Path:
    """nbgrader's exchange: as given, else ``c.Exchange.root`` of the course's nbgrader config, else nbgrader's
    default."""
    if given:
        return Path(given).resolve()
    return Path(str(configured(nbgrader_config(course.root), "Exchange", "root") or "/srv/nbgrader/exchange"))


def inbound(exchange: Path) -> Path:
    """The exchange's folder of the course's hand-ins (nbgrader submit writes one folder per attempt there)."""
    return Path(exchange) / COURSE_ID / "inbound"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def redact(url: str) -> str:
    """A database URL fit to print: any password replaced by ***."""
    import re

    return re.sub(r"(//[^:/@]+:)[^@]*@", r"\1***@", url)


def checkout_env() -> dict[str, str]:
    """This process's environment with this checkout's package importable and this environment's
    programs first on PATH (`nbgrader db upgrade` runs `alembic` from there)."""
    env = dict(os.environ)
    paths = [str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PATH"] = python_first_on_path(env.get("PATH", ""))
    return env


def python_first_on_path(path: str) -> str:
    """``path`` (a PATH value) with the folder of this environment's programs first, once."""
    bindir = str(Path(sys.executable).parent)
    return os.pathsep.join([bindir] + [p for p in path.split(os.pathsep) if p and p != bindir])


def nbgrader_env() -> dict[str, str]:
    """Environment for an nbgrader subprocess: ``checkout_env``, plain output."""
    env = checkout_env()
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_nbgrader(
    args: list[str], cwd: Path, log: Path | None = None, timeout: float | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """``nbgrader <args>`` (through ``plugins/app.py``) in ``cwd``; output to ``log`` (appended) or captured."""
    cmd = [sys.executable, "-m", "whole_transformer.course.plugins.app", *args]
    env = env or nbgrader_env()
    if log is None:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    with open(log, "a") as out:
        return subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            start_new_session=True,
        )


def content_digest(files: dict[str, bytes]) -> str:
    """The digest of files given as data (path relative to their folder → content): the same as ``digest_files``
    of those very files in a folder, without writing them anywhere."""
    h = hashlib.sha256()
    for rel in sorted(files, key=PurePosixPath):
        h.update(rel.encode())
        h.update(b"\0")
        h.update(files[rel])
        h.update(b"\0")
    return h.hexdigest()


def digest_files(paths: list[Path], base: Path) -> str:
    """The digest of files in a folder: their paths relative to ``base`` and their contents, in order."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(base)).encode())
        h.update(b"\0")
        try:
            h.update(p.read_bytes())
        except OSError as e:
            h.update(f"unreadable: {e}".encode())
        h.update(b"\0")
    return h.hexdigest()


def write_json(path: Path, data) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
    os.replace(tmp, path)
