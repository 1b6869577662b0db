"""The restore stage: put back what a student may not change, and say what was changed.

``restore(submitted, release)`` rebuilds a submitted notebook around the released one:

- every protected cell of the release (read-only, answer and test cells: ``cells.is_protected``)
  is found in the submission by its grade_id, else by its cell id, else by its exact source, and
  put back in the release's order;
- read-only and test cells come back exactly as released (nbgrader then puts the hidden tests
  back in); answer cells keep the student's text but get their cell type and metadata back;
- cells the student added stay where they were (after the protected cell they followed);
- each difference is a finding: deleted, edited, retagged (grade_id, points or flags changed),
  re-typed (code ↔ markdown), duplicated grade ids, moved, metadata claiming unknown grade ids.

Differences are what the student did, not what the instructor did since: a submission is compared
with the release that student started from (``started_from``: of every release kept in
release-history/, the one its protected cells match best), and rebuilt around the current one. A
test whose cases or points the instructor changed after that student's release is put back as it
is now, without a finding; so is a cell added to the release since.
"""

from __future__ import annotations

import copy

import nbformat.v4 as nbf
from nbformat import NotebookNode

from ..cells import NBGRADER_FLAGS, cell_kind, cell_source, flags, grade_id, is_protected, nbgrader_meta, tracked_id
from ..core.results import Finding


def _describe_flags(want: dict, got: dict) -> str:
    parts = []
    for k in NBGRADER_FLAGS:
        if want.get(k) != got.get(k):
            parts.append(f"{k} {want.get(k)!r} → {got.get(k)!r}")
    return ", ".join(parts)


def _protected_by_gid(nb: NotebookNode) -> dict[str, NotebookNode]:
    return {tracked_id(c): c for c in nb.cells if is_protected(c)}


def started_from(submitted: NotebookNode, releases: list[NotebookNode]) -> NotebookNode:
    """Of ``releases`` (oldest first, the current one last), the one the submission's protected cells
    match best (same source, type and flags; then the fewest of its cells missing); the latest of equals."""
    theirs: dict[str, NotebookNode] = {}
    for c in submitted.get("cells", []):
        if gid := grade_id(c):
            theirs.setdefault(gid, c)

    def score(rel: NotebookNode) -> tuple[int, int]:
        cells = _protected_by_gid(rel)
        same = sum(
            1
            for gid, rc in cells.items()
            if gid in theirs
            and cell_source(theirs[gid]) == cell_source(rc)
            and flags(theirs[gid]) == flags(rc)
            and theirs[gid].get("cell_type") == rc.cell_type
        )
        return same, -sum(1 for gid in cells if gid not in theirs)

    best = max(range(len(releases)), key=lambda i: (*score(releases[i]), i))
    return releases[best]


def _pick(rc: NotebookNode, scells: list, by_gid: dict[str, list[int]], taken: dict[int, int]) -> int | None:
    """The submitted cell that stands for protected release cell ``rc``: by grade_id (the same cell
    id first), else by cell id, else an untagged cell with the same source; None if there is none."""
    gid, rid = tracked_id(rc), rc.get("id")
    cands = [j for j in by_gid.get(gid, []) if j not in taken]
    if cands:
        same_id = [j for j in cands if rid and scells[j].get("id") == rid]
        return same_id[0] if same_id else cands[0]
    same_id = [j for j in range(len(scells)) if j not in taken and rid and scells[j].get("id") == rid]
    if same_id:
        return same_id[0]
    text = cell_source(rc)
    same_src = [
        j
        for j in range(len(scells))
        if j not in taken and not grade_id(scells[j]) and text.strip() and cell_source(scells[j]) == text
    ]
    return same_src[0] if same_src else None


def _match(scells: list, prot: list[tuple[int, NotebookNode]]) -> tuple[dict[int, int], dict[int, int | None]]:
    """(submitted index → release index, release index → submitted index or None) of the protected cells."""
    by_gid: dict[str, list[int]] = {}
    for j, c in enumerate(scells):
        if gid := grade_id(c):
            by_gid.setdefault(gid, []).append(j)
    taken: dict[int, int] = {}  # submitted index → release index
    chosen: dict[int, int | None] = {}  # release index → submitted index
    for ri, rc in prot:
        pick = _pick(rc, scells, by_gid, taken)
        chosen[ri] = pick
        if pick is not None:
            taken[pick] = ri
    return taken, chosen


def _anchored(n: int, taken: dict[int, int]) -> tuple[dict[int, list[int]], bool]:
    """(protected release index, or -1 for the top → the unmatched submitted cells that follow it,
    whether the protected cells were moved out of the released order)."""
    groups: dict[int, list[int]] = {-1: []}
    anchor = -1
    order_seen = []
    for j in range(n):
        if j in taken:
            anchor = taken[j]
            order_seen.append(anchor)
            groups.setdefault(anchor, [])
        else:
            groups.setdefault(anchor, []).append(j)
    return groups, order_seen != sorted(order_seen)


def _loose(sc: NotebookNode, j: int, prot_ids: set[str], findings: list[Finding]) -> NotebookNode:
    """A cell the student added (or a stray copy), rebuilt clean, without nbgrader metadata."""
    gid = grade_id(sc)
    if "nbgrader" in sc.get("metadata", {}):
        if gid in prot_ids:
            findings.append(
                Finding(gid, f"duplicate grade_id {gid!r} (cell {j + 1}): the extra copy was made an ordinary cell")
            )
        elif gid:
            findings.append(Finding(f"cell {j + 1}", f"nbgrader metadata with unknown grade_id {gid!r} removed"))
    kind = sc.get("cell_type", "")  # none: a markdown cell
    make = {"code": nbf.new_code_cell, "raw": nbf.new_raw_cell}.get(kind, nbf.new_markdown_cell)
    cell = make(source=cell_source(sc))
    tags = sc.get("metadata", {}).get("tags")
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        cell.metadata["tags"] = list(tags)
    return cell


def _put_back(rc: NotebookNode, sc: NotebookNode, was: NotebookNode, findings: list[Finding]) -> NotebookNode:
    """Protected release cell ``rc`` put back over the student's ``sc`` (``was``: the cell as this
    student was released it): an answer keeps the student's source and tags, anything else is the
    release's; what was changed becomes a finding."""
    gid, kind = tracked_id(rc), cell_kind(rc)
    want, got = flags(was), flags(sc)
    if not nbgrader_meta(sc):
        findings.append(Finding(gid, f"{kind}: nbgrader metadata removed (de-tagged); restored"))
    elif want != got:
        findings.append(Finding(gid, f"{kind} retagged ({_describe_flags(want, got)}); restored"))
    if sc.get("cell_type") != was.cell_type:
        findings.append(
            Finding(gid, f"{kind} re-typed {was.cell_type} → {sc.get('cell_type')}; restored as {rc.cell_type}")
        )
    if nbgrader_meta(rc).get("solution"):
        cell = copy.deepcopy(rc)
        cell.source = cell_source(sc)
        theirs = sc.get("metadata", {}).get("tags", [])
        theirs = theirs if isinstance(theirs, list) else []
        mine = list(rc.metadata.get("tags", []))
        tags = list(dict.fromkeys(mine + [t for t in theirs if isinstance(t, str)]))
        if tags:
            cell.metadata["tags"] = tags
    else:
        if cell_source(sc) != cell_source(was):
            findings.append(Finding(gid, f"{kind} edited; restored from the release"))
        cell = copy.deepcopy(rc)
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    return cell


def restore(
    submitted: NotebookNode, release: NotebookNode, started: NotebookNode | None = None
) -> tuple[NotebookNode, list[Finding]]:
    """The submission with every protected cell of the release put back; the findings, judged
    against ``started`` (the release the student started from; default: ``release``)."""
    findings: list[Finding] = []
    base = _protected_by_gid(started) if started is not None else None
    scells = list(submitted.get("cells", []))
    prot = [(i, c) for i, c in enumerate(release.cells) if is_protected(c)]
    prot_ids = {tracked_id(c) for _, c in prot}
    taken, chosen = _match(scells, prot)
    # anchors: each unmatched submitted cell follows the protected cell before it
    groups, moved = _anchored(len(scells), taken)
    if moved:
        findings.append(Finding("notebook", "protected cells were moved; put back in the released order"))

    out: list[NotebookNode] = [_loose(scells[j], j, prot_ids, findings) for j in groups[-1]]
    for ri, rc in prot:
        gid = tracked_id(rc)
        j = chosen[ri]
        was = rc if base is None else base.get(gid)  # the cell as this student was released it
        if j is None:
            if was is not None:
                findings.append(Finding(gid, f"{cell_kind(rc)} deleted; restored from the release"))
            out.append(copy.deepcopy(rc))
        else:
            out.append(_put_back(rc, scells[j], rc if was is None else was, findings))
        out.extend(_loose(scells[k], k, prot_ids, findings) for k in groups.get(ri, []))

    nb = copy.deepcopy(release)
    nb.cells = out
    nb.metadata.pop("widgets", None)
    return nb, findings
