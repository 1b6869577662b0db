"""``make release``: what students get, with every test and key brought in step first.

``release`` first brings the generated parts of ``source/`` in step with their one home each
(``bring_in_step``), and says what changed:

- the points of graded cells listed in ``course.toml`` ``[points]`` (written into source/);
- the hidden tests, from ``answers/hidden_tests.py`` (an exercise's cases) and the source's own
  solution cells (a question's answer); a generated cell edited by hand is refused, naming the
  place to edit (``hidden_cells.HandEdited``);
- the visible checks' data: the exercises' hashes (``answers/check_data.py``) and the questions'
  answer hashes (``whole_transformer/data/questions.json``, from the solution cells);
- the mistake table (``answers/diagnose.py``): what each catalogued mistake returns on the hidden
  cases, by which grading names a wrong answer.

Then it runs ``nbgrader generate_assignment`` on ``source/whole-transformer/``: solutions become
stubs, hidden tests are removed, protected cells are locked, and the gradebook learns the
assignment. The new release replaces the old one only if no cell of it shows an expected value, a
hidden test's line or a reference solution's line (``refuse_leaks``); else it is refused, the cell
named. The result, ``release/whole-transformer/``, is committed. Each release that differs
from the one before is kept in ``release-history/<n>/`` (committed too): grading compares a
submission with the release that student started from, so an instructor's later change of a
test or its points is not taken for tampering (``autograder/restore.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from whole_transformer.course.answers import check_data, diagnose, hidden_cells
from whole_transformer.course.answers.leak_search import release_leaks, source_secrets
from whole_transformer.course.cells import grade_id, nbgrader_meta
from whole_transformer.course.gradebook import prepare_database, stamp_gradebook
from whole_transformer.course.layout import ASSIGNMENT, Course, run_nbgrader
from whole_transformer.course.term import settings as term_settings
from whole_transformer.course.whole_output import replaced_whole

HISTORY = "release-history"


# ---------------------------------------------------------------- the release history
def history_dirs(course: Course) -> list[Path]:
    base = course.root / HISTORY
    return (
        sorted((d for d in base.iterdir() if d.is_dir() and d.name.isdigit()), key=lambda d: int(d.name))
        if base.is_dir()
        else []
    )


def release_history(course: Course) -> list[dict[str, str]]:
    """Every release kept, oldest first: notebook name → the released notebook (JSON text)."""
    return [{p.stem: p.read_text(encoding="utf-8") for p in sorted(d.glob("*.ipynb"))} for d in history_dirs(course)]


def _same(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.glob("*.ipynb"))
    return names == sorted(p.name for p in b.glob("*.ipynb")) and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names
    )


def keep_release(course: Course, release: Path) -> Path | None:
    """Keep ``release`` in release-history/ if it differs from the last release kept; the new folder."""
    dirs = history_dirs(course)
    if dirs and _same(dirs[-1], release):
        return None
    new = course.root / HISTORY / f"{(int(dirs[-1].name) + 1) if dirs else 1:03d}"
    new.mkdir(parents=True)
    for p in sorted(release.glob("*.ipynb")):
        shutil.copy2(p, new / p.name)
    return new


# ---------------------------------------------------------------- points from course.toml
def _last_released_points(course: Course) -> dict[tuple[str, str], float]:
    dirs = history_dirs(course)
    folder = dirs[-1] if dirs else course.release
    out: dict[tuple[str, str], float] = {}
    for p in folder.glob("*.ipynb"):
        for c in nbformat.read(p, as_version=4).cells:
            if (gid := grade_id(c)) and nbgrader_meta(c).get("grade"):
                out[(p.name, gid)] = float(nbgrader_meta(c).get("points") or 0)
    return out


def points_planned(course: Course, settings) -> list[tuple[Path, str, float, float]]:
    """(notebook, grade_id, points in source/, points in course.toml) of every cell to change."""
    wanted = dict(settings.points)
    if not wanted:
        return []
    released = _last_released_points(course)
    plan, seen, edited = [], set(), []
    for path in sorted(course.source.glob("*.ipynb")):
        for c in nbformat.read(path, as_version=4).cells:
            gid = grade_id(c)
            if gid is None or gid not in wanted or not nbgrader_meta(c).get("grade"):
                continue
            seen.add(gid)
            have = float(nbgrader_meta(c).get("points") or 0)
            if have == wanted[gid]:
                continue
            before = released.get((path.name, gid))
            if before is not None and have != before:
                edited.append(
                    f"  {gid} in source/{ASSIGNMENT}/{path.name}: {have:g} points there, {before:g} "
                    f"when last released, {wanted[gid]:g} in course.toml"
                )
            plan.append((path, gid, have, wanted[gid]))
    unknown = sorted(set(wanted) - seen)
    if unknown:
        raise ValueError(
            f"course.toml [points]: no graded cell {', '.join(unknown)} in source/; the graded "
            "cells' grade_ids start with test_ (see the source notebooks)"
        )
    if edited:
        raise ValueError(
            "refused: the points of these cells were edited by hand in source/, but course.toml "
            "[points] sets them:\n" + "\n".join(edited) + "\nset the points in course.toml and run make release again"
        )
    return plan


def write_points(plan) -> None:
    by_nb: dict[Path, dict[str, float]] = {}
    for path, gid, _, new in plan:
        by_nb.setdefault(path, {})[gid] = new
    for path, new in by_nb.items():
        nb = nbformat.read(path, as_version=4)
        for c in nb.cells:
            if (gid := grade_id(c)) is not None and gid in new and nbgrader_meta(c).get("grade"):
                points = new[gid]
                c.metadata["nbgrader"]["points"] = int(points) if points == int(points) else points
        nbformat.write(nb, path)


# ---------------------------------------------------------------- nothing of the answers in it
def refuse_leaks(course: Course, out: Path) -> None:
    """Refuse a release whose notebooks (prose, code, outputs, metadata) show an expected value (however
    written), a hidden test's line, a hidden input that names its case or a reference solution's line of
    source/, however short (``answers/leak_search.py``), naming each cell and what it showed."""
    secrets = source_secrets(course.source)
    found = release_leaks(out, secrets)
    if found:
        raise ValueError(
            "make release refused: what students would receive shows what only the grader may know:\n  "
            + "\n  ".join(found)
            + f"\ntake it out of that cell in source/{ASSIGNMENT}/ and run make release again "
            "(release/ is left as it was)"
        )


# ---------------------------------------------------------------- in step
def out_of_step(course: Course, questions_data: Path | None = None, grading: bool = False) -> list[str]:
    """What ``make release`` would change, one line each (empty: everything is in step). ``grading``: only
    what decides a grade (points, hidden tests, a question's hidden test from its answer key, the release),
    without the visible checks' data and the mistake table, which take a minute to work out (make autograde
    checks this part)."""
    settings = term_settings.load(course)
    data = questions_data or check_data.QUESTIONS_DATA
    out = [
        f"points of {gid} in {path.name}: {old:g} → {new:g} (course.toml)"
        for path, gid, old, new in points_planned(course, settings)
    ]
    out += [
        f"hidden test {gid} edited by hand in {nb}: edit {home} instead"
        for nb, gid, home in hidden_cells.hand_edited(course.source)
    ]
    out += [f"hidden test {gid} out of step with its generator" for gid in hidden_cells.out_of_sync(course.source)]
    out += [
        f"visible check of {q}: its answer key in {data.name} differs from the source"
        for q in ([] if grading else check_data.questions_out_of_step(course.source, data))
    ]
    if questions_data is None and not grading and not check_data.is_current():
        out.append(f"visible checks' data {check_data.DATA.name} is out of date")
    if questions_data is None and not grading and not diagnose.is_current(course.source):
        out.append(f"the mistake table {diagnose.TABLE_FILE.name} is out of date")
    released = course.release
    if not all((released / p.name).exists() for p in course.source.glob("*.ipynb")):
        out.append("release/ lacks a notebook of source/")
    return out


def bring_in_step(course: Course, log=print, questions_data: Path | None = None) -> list[str]:
    """Write every generated part of source/ and the visible checks' data; the changes, one line each.
    Nothing is written if a generated cell was edited by hand (``hidden_cells.HandEdited``)."""
    settings = term_settings.load(course)
    data = questions_data or check_data.QUESTIONS_DATA
    plan = points_planned(course, settings)
    edited = hidden_cells.hand_edited(course.source)
    if edited:
        raise hidden_cells.HandEdited(edited)
    check_data.questions_planned(course.source, data)  # refuses a key the hints call wrong, before any write
    changes = [f"points of {gid} in {path.name}: {old:g} → {new:g} (course.toml)" for path, gid, old, new in plan]
    write_points(plan)
    changes += [f"hidden test {gid} rewritten" for gid in hidden_cells.write(course.source)]
    changes += [
        f"visible check of {q} follows its new answer key ({data.name})"
        for q in check_data.write_questions(course.source, data)
    ]
    if questions_data is None and not check_data.is_current():
        check_data.write()
        changes.append(f"visible checks' data rewritten ({check_data.DATA.name})")
    if questions_data is None and not diagnose.is_current(course.source):  # what each catalogued mistake returns
        diagnose.write(course.source)
        changes.append(f"the mistake table rewritten ({diagnose.TABLE_FILE.name})")
    for line in changes:
        log(f"release: {line}")
    return changes


def release(course: Course, dest: Path | None = None, log=print, questions_data: Path | None = None) -> Path:
    """Bring source/ in step, then nbgrader generate_assignment; into ``dest`` (a folder) instead of
    release/ if given (then nothing is brought in step or kept in the history)."""
    args = ["generate_assignment", ASSIGNMENT, "--force"]
    if dest is None:
        changes = bring_in_step(course, log, questions_data)
        prepare_database(course, log)  # a database server gets nbgrader's schema (or its migrations) first
    if dest is not None:
        args.append(f"--CourseDirectory.release_directory={Path(dest).resolve()}")
    out = (Path(dest).resolve() if dest is not None else course.root / "release") / ASSIGNMENT
    with replaced_whole([out]):  # refused or failed: the release there before is left as it was
        done = run_nbgrader(args, course.root)
        if done.returncode != 0 or not out.is_dir():
            raise RuntimeError(
                f"nbgrader generate_assignment failed:\n{(done.stdout or '')[-3000:]}{(done.stderr or '')[-3000:]}"
            )
        refuse_leaks(course, out)
    if dest is None:  # the course gradebook now holds the assignment as source/ defines it
        stamp_gradebook(course)
        kept = keep_release(course, out)
        if kept is not None:
            log(
                f"release: kept as {kept.relative_to(course.root)} (submissions are compared with the release "
                "each student started from)"
            )
        if not changes:
            log("release: source/, its hidden tests and the visible checks' data were already in step")
    log(f"released {len(list(out.glob('*.ipynb')))} notebooks to {out}")
    return out
