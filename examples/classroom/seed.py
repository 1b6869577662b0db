"""The students' environment seeded from the running one: the third-party packages it needs, put there as files.

Making the environment the plain way unpacks torch and a hundred other wheels again, minutes on a 2-core
machine. So what this environment has installed of the requirements (``installed_closure``: dependencies
and extras followed, each only where its version, Requires-Python and markers fit the students' Python)
is put into the new venv first (``seed_env``: the files each one's RECORD lists, hard links where one disk
holds both, else copies; console scripts made to start the new venv's Python). pip then finds those
satisfied (``env.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

import packaging
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from .commands import run


def installed_closure(requirements: list[str], python: Mapping[str, str] | None = None) -> list:
    """The distributions installed here that ``requirements`` need, dependencies and extras followed, each
    only where pip would take it for the Python described by ``python`` (its marker environment; default:
    this one): the version fits the requirement and the distribution's Requires-Python (a patch release can
    matter: soupsieve 4.1.3 needs 3.11.5, and fails on 3.11.2). What is missing or does not fit is left out."""
    marker_env: Mapping[str, str] = python or {k: str(v) for k, v in default_environment().items()}
    found, seen, todo = {}, set(), [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue
        if req.specifier.contains(dist.version, prereleases=True) and SpecifierSet(
            (dist.metadata.get_all("Requires-Python") or [""])[0]
        ).contains(marker_env["python_full_version"], prereleases=True):
            found[key[0]] = dist
            todo += [
                dep
                for dep in map(Requirement, dist.requires or [])
                if dep.marker is None or any(dep.marker.evaluate({**marker_env, "extra": e}) for e in ["", *req.extras])
            ]
    return list(found.values())


def seed_env(env: Path, dists: list, prefix: Path = Path(sys.prefix)) -> int:
    """Put the files of ``dists`` (installed under ``prefix``, as their RECORD lists them) into the venv
    ``env``: hard links where one disk holds both, else copies; console scripts get ``env``'s Python.
    What the venv has already is left alone. Returns how many distributions it put there."""
    have = {canonicalize_name(p.name.split("-")[0]) for p in env.glob("lib/python3*/site-packages/*.dist-info")}
    dists = [d for d in dists if canonicalize_name(d.metadata["Name"]) not in have and d.files]
    root, made = str(prefix) + os.sep, set()
    for dist in dists:
        for f in dist.files:
            src = os.path.normpath(dist.locate_file(f))
            if not src.startswith(root) or os.path.islink(src):
                continue
            dst = os.path.join(env, src[len(root) :])
            if (folder := os.path.dirname(dst)) not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            if os.path.basename(folder) == "bin" and os.path.isfile(src):
                first, _, rest = Path(src).read_bytes().partition(b"\n")
                if first.startswith(b"#!") and str(prefix).encode() in first:  # a console script of that venv
                    Path(dst).write_bytes(f"#!{env / 'bin' / 'python'}\n".encode() + rest)
                    os.chmod(dst, 0o755)
                    continue
            try:
                os.link(src, dst)
            except FileNotFoundError:  # listed in RECORD but not there (a .pyc never written)
                pass
            except OSError:
                shutil.copy2(src, dst)
    return len(dists)


def seed_from_here(env: Path, python: Path, requirements: list[str]) -> int:
    """Copy into ``env`` what this Python has installed of the requirements, when ``env`` runs the same Python
    minor (pip installs the rest); returns how many distributions were copied."""
    seeded = 0
    if (env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}").is_dir():  # the same Python minor
        here = str(Path(packaging.__file__).parent.parent)  # packaging, to describe that Python as pip will
        markers = run(
            [
                python,
                "-c",
                f"import sys, json; sys.path.insert(0, {here!r}); from packaging.markers "
                "import default_environment as d; print(json.dumps(d()))",
            ]
        ).stdout
        seeded = seed_env(env, installed_closure(requirements, json.loads(markers)))
    return seeded
