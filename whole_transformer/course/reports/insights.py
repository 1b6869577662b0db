"""``make insights``: what the class got wrong, for the next lecture: ``insights.html`` and ``insights.csv``.

The insights themselves (per exercise, question, late and failed submission, and what to go over in the
next lecture) are collected in ``class_insights.py``. ``insights.csv`` has one row per fact (``section,
item, detail, count, students, hint``); ``insights.html`` is one self-contained file (styles and plots
inline, opens offline); every plot has alt text and the table it was drawn from beside it
(``insights_page.py`` draws and writes it).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ..layout import Course
from ..term.names import say_problems
from .class_insights import OUTCOMES, Insights, collect
from .insights_page import render_html

CSV_COLUMNS = ["section", "item", "detail", "count", "students", "hint"]


def csv_rows(ins: Insights) -> list[dict]:
    def row(section, item, detail, students, hint="", count=None):
        return {
            "section": section,
            "item": item,
            "detail": detail,
            "count": len(students) if count is None else count,
            "students": " ".join(students),
            "hint": hint,
        }

    out = []
    for ex in ins.exercises.values():
        out += [row("exercise", ex.name, k, ex.outcomes[k]) for k in OUTCOMES]
        for key, m in sorted(ex.mistakes.items(), key=lambda kv: (-len(kv[1]["students"]), kv[0])):
            out.append(row("mistake", ex.name, f"{key} ({m['name']})" if key else m["name"], m["students"], m["says"]))
        for said, students in sorted(ex.errors.items()):
            out.append(row("what the code did", ex.name, said, students))
    for q in ins.questions.values():
        out.append(row("question", q.name, "right", q.right))
        out.append(row("question", q.name, "unanswered", q.unanswered))
        for answer, w in sorted(q.wrong.items(), key=lambda kv: (-len(kv[1]["students"]), kv[0])):
            out.append(row("question", q.name, answer, w["students"], w["hint"]))
    out += [row("late", s, how, [s]) for s, how in ins.late]
    out += [row("failed", s, why, [s]) for s, why in ins.failed]
    out += [
        row("next lecture", str(i), it["what"], it["students"], it["hint"]) for i, it in enumerate(ins.next_lecture, 1)
    ]
    return out


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def insights(course: Course, log=print) -> tuple[Path, Path]:
    """insights.csv and insights.html, both made before either is written; returns their paths (html, csv)."""
    ins = collect(course)
    say_problems(course, log, "insights")
    out_csv, out_html = course.root / "insights.csv", course.root / "insights.html"
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(csv_rows(ins))
    page = render_html(ins)  # both made before either is written: all or nothing
    _write(out_csv, buf.getvalue())
    _write(out_html, page)
    log(
        f"wrote {out_html.name} and {out_csv.name}: {len(ins.students)} students; what to go over next: "
        + ("; ".join(f"{it['what']} ({it['count']})" for it in ins.next_lecture[:3]) or "nothing")
    )
    return out_html, out_csv
