"""``insights.html``: the class's insights (``class_insights.collect``) as one self-contained page.

Styles and plots are inline (the page opens offline); every plot has alt text and the table it was
drawn from beside it.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Container

from ..csp import with_policy
from ..layout import ASSIGNMENT
from .class_insights import OUTCOMES, Insights

# ---------------------------------------------------------------------------------- plots
COLOURS = {
    "full": "#1b7837",
    "partial": "#a6dba0",
    "none": "#c2a5cf",
    "unanswered": "#bababa",
    "failed": "#d6604d",
    "missing": "#f4f4f4",
}


def _png(fig) -> str:
    import matplotlib.pyplot as plt  # lazy: matplotlib is heavy, and only drawing a plot needs it

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def outcome_plot(ins: Insights) -> tuple[str, str]:
    """(PNG as base64, alt text): per exercise, a bar of students by outcome."""
    import matplotlib  # lazy: matplotlib is heavy, and only drawing a plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the backend is chosen, and only for a plot

    names = list(ins.exercises)
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.55 * len(names)))
    left = [0] * len(names)
    for k in OUTCOMES:
        counts = [len(ins.exercises[n].outcomes[k]) for n in names]
        ax.barh(names, counts, left=left, color=COLOURS[k], edgecolor="#333333", linewidth=0.5, label=k)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("students")
    ax.legend(ncol=len(OUTCOMES), loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    alt = (
        "Students per exercise by outcome: "
        + "; ".join(
            f"{n}: "
            + ", ".join(f"{len(ins.exercises[n].outcomes[k])} {k}" for k in OUTCOMES if ins.exercises[n].outcomes[k])
            for n in names
        )
        + "."
    )
    return _png(fig), alt


def mistake_plot(ins: Insights) -> tuple[str, str] | None:
    """(PNG as base64, alt text): students per named mistake, most first; None if there is none."""
    import matplotlib  # lazy: matplotlib is heavy, and only drawing a plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the backend is chosen, and only for a plot
    from matplotlib.ticker import MaxNLocator  # lazy: matplotlib is heavy, and only drawing a plot needs it

    bars = sorted(
        (
            (f"{ex.name}: {m['name']}", len(m["students"]))
            for ex in ins.exercises.values()
            for key, m in ex.mistakes.items()
            if key
        ),
        key=lambda b: (-b[1], b[0]),
    )
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.32 * len(bars)))
    ax.barh([b[0] for b in bars], [b[1] for b in bars], color="#762a83")
    ax.invert_yaxis()
    ax.set_xlabel("students")
    locator = ax.xaxis.get_major_locator()  # a linear axis's AutoLocator, typed as the base Locator
    if isinstance(locator, MaxNLocator):
        locator.set_params(integer=True)
    ax.tick_params(axis="y", labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    alt = "Students per catalogued mistake, most first: " + "; ".join(f"{n}: {c}" for n, c in bars) + "."
    return _png(fig), alt


# ---------------------------------------------------------------------------------- insights.html
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1a1a1a; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; }
th, td { border: 1px solid #bbb; padding: .25rem .55rem; text-align: left; vertical-align: top; }
th { background: #eee; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; } img { max-width: 100%; height: auto; }
figcaption { font-size: .9rem; color: #444; }
ol.next li { margin: .35rem 0; } .hint { color: #333; } .who { color: #555; font-size: .9rem; }
"""


def _e(text) -> str:
    return html.escape(str(text))


def _table(head: list[str], rows: list[list], numeric: Container[int] = frozenset(), caption: str = "") -> str:
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    th = "".join(f'<th scope="col">{_e(h)}</th>' for h in head)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="n">{_e(c)}</td>' if i in numeric else f"<td>{_e(c)}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _figure(png_alt, caption: str) -> str:
    png, alt = png_alt
    return (
        f'<figure><img src="data:image/png;base64,{png}" alt="{_e(alt)}">'
        f"<figcaption>{_e(caption)} The table below holds the same numbers.</figcaption></figure>"
    )


def render_html(ins: Insights) -> str:
    parts = [
        f"<h1>What the class got wrong: {_e(ASSIGNMENT)}</h1>",
        f"<p>{len(ins.students)} students. Made by <code>make insights</code> from the gradebook and the "
        "grading records.</p>",
        "<h2>What to go over in the next lecture</h2>",
        _next_lecture_html(ins),
        "<h2>Exercises</h2>",
        *_exercises_html(ins),
        "<h2>Questions</h2>",
        _questions_html(ins),
        "<h2>Late and failed submissions</h2>",
        *_late_and_failed_html(ins),
    ]
    return with_policy(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>What the class got wrong: {_e(ASSIGNMENT)}</title><style>{STYLE}</style></head>"
        "<body><main>" + "\n".join(parts) + "</main></body></html>\n"
    )


def _next_lecture_html(ins: Insights) -> str:
    """The list of what to go over, most students first."""
    if ins.next_lecture:
        return (
            '<ol class="next">'
            + "".join(
                f"<li><strong>{_e(it['what'])}</strong>: {it['count']} student{'s' if it['count'] != 1 else ''}"
                f"{'. <span class=hint>' + _e(it['hint']) + '</span>' if it['hint'] else ''}"
                f" <span class=who>({_e(', '.join(it['students']))})</span></li>"
                for it in ins.next_lecture
            )
            + "</ol>"
        )
    return "<p>Nothing: no catalogued mistake, no wrong answer, nothing left unanswered.</p>"


def _exercises_html(ins: Insights) -> list[str]:
    """The outcomes per exercise (plot and table), the catalogued mistakes (plot and table)."""
    parts = [
        _figure(outcome_plot(ins), "Students per exercise, by outcome."),
        _table(
            ["exercise", *OUTCOMES],
            [[ex.name, *(len(ex.outcomes[k]) for k in OUTCOMES)] for ex in ins.exercises.values()],
            set(range(1, len(OUTCOMES) + 1)),
            "Students per exercise, by outcome",
        ),
    ]
    plot = mistake_plot(ins)
    if plot:
        parts.append(_figure(plot, "Students per catalogued mistake."))
    mrows = [
        [ex.name, m["name"] + (f" ({key})" if key else ""), len(m["students"]), ", ".join(m["students"]), m["says"]]
        for ex in ins.exercises.values()
        for key, m in sorted(ex.mistakes.items(), key=lambda kv: (-len(kv[1]["students"]), kv[0]))
    ]
    parts.append(
        _table(
            ["exercise", "mistake", "students", "who", "what the check tells them"],
            mrows,
            {2},
            "Mistakes found in the wrong answers",
        )
        if mrows
        else "<p>No wrong answers.</p>"
    )
    return parts


def _questions_html(ins: Insights) -> str:
    """The answers given to each question: right, each wrong one with its hint, unanswered."""
    qrows = []
    for q in ins.questions.values():
        qrows.append([q.name, "right", len(q.right), ", ".join(q.right), ""])
        for answer, w in sorted(q.wrong.items(), key=lambda kv: (-len(kv[1]["students"]), kv[0])):
            qrows.append([q.name, answer, len(w["students"]), ", ".join(w["students"]), w["hint"]])
        if q.unanswered:
            qrows.append([q.name, "unanswered", len(q.unanswered), ", ".join(q.unanswered), ""])
    return _table(
        ["question", "answer", "students", "who", "hint for that answer"], qrows, {2}, "Answers given to each question"
    )


def _late_and_failed_html(ins: Insights) -> list[str]:
    """The late submissions, and those that could not be graded."""
    return [
        _table(["student", "how late"], [list(x) for x in ins.late], caption="Late submissions")
        if ins.late
        else "<p>No late submission.</p>",
        _table(
            ["student", "what could not be graded"],
            [list(x) for x in ins.failed],
            caption="Submissions that could not be graded",
        )
        if ins.failed
        else "<p>Every submission handed in could be graded.</p>",
    ]
