"""axe-core in the browser tests: inject the pinned axe.min.js into a Playwright page and run the WCAG 2.1 A/AA rules.

    found = run_axe(page)                                   # the whole page (a lecture HTML page)
    found = run_axe(page, include=[".jp-OutputArea-output"])  # only the course's own output areas in JupyterLab
    bad = serious(found)                                    # [{rule, impact, help, nodes: [{target, summary}]}]
    counts(bad)                                             # {rule: number of elements}

axe-core comes from npm at the version the Makefile pins (AXE_VERSION), installed by `make a11y-tools` (a
prerequisite of `make test` and `make e2e`) into .a11y/node_modules/, which git ignores. Without it the tests
fail and say so; without npm they skip (or fail when WT_REQUIRE_BROWSER=1, as on CI).
"""

import os
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AXE_JS = REPO / ".a11y" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BAD_IMPACTS = ("serious", "critical")
ARTIFACTS_NAME = "axe-counts.json"  # artifacts/e2e/: every count measured, by page or notebook and state


def pinned_version() -> str:
    m = re.search(r"^AXE_VERSION\s*:=\s*(\S+)", (REPO / "Makefile").read_text(), re.M)
    return m.group(1) if m else "?"


def axe_source() -> str:
    if not AXE_JS.is_file():
        reason = f"axe-core is not installed at {AXE_JS.relative_to(REPO)}: run `make a11y-tools` (npm)"
        if shutil.which("npm") is None and os.environ.get("WT_REQUIRE_BROWSER") != "1":
            pytest.skip(reason + "; npm is not on PATH")
        pytest.fail(reason, pytrace=False)
    return AXE_JS.read_text()


def inject(page) -> str:
    """Load axe into the page (once per document); returns axe's version as the page reports it."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    return page.evaluate("() => window.axe.version")


def run_axe(page, include=None, exclude=None) -> dict:
    """axe.run with the four WCAG tags on the page, or on the elements matching the `include` selectors."""
    inject(page)
    context = None
    if include:
        context = {"include": [[s] for s in include]}
        if exclude:
            context["exclude"] = [[s] for s in exclude]
    return page.evaluate(
        """async ([context, tags]) => {
            const options = {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']};
            const r = context ? await window.axe.run(context, options) : await window.axe.run(document, options);
            return {version: window.axe.version, violations: r.violations.map(v => ({
                rule: v.id, impact: v.impact, help: v.help, tags: v.tags,
                nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200),
                                          summary: (n.failureSummary || '').slice(0, 300)}))}))};
        }""",
        [context, TAGS],
    )


def serious(found: dict) -> list[dict]:
    return [v for v in found["violations"] if v["impact"] in BAD_IMPACTS]


def counts(violations: list[dict]) -> dict[str, int]:
    return {v["rule"]: len(v["nodes"]) for v in violations}


def describe(violations: list[dict], limit: int = 4) -> str:
    """A readable list of what failed: rule, impact, help and the first few elements."""
    lines = []
    for v in violations:
        lines.append(f"{v['rule']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']}")
        for n in v["nodes"][:limit]:
            lines.append(f"    {n['target']}  {n['html'][:120]}")
            if n["summary"]:
                lines.append("      " + n["summary"].replace("\n", " ")[:200])
    return "\n".join(lines)
