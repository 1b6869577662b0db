"""What a run of the benchmarks collects: its rows (one per item measured), the groups that make them, and the
run's settings the groups read (``--quick``, the class size)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

CLASS_SIZE = 25
QUICK_CLASS_SIZE = 2  # --quick: a class this small, unless --class-size says otherwise


class Skipped(Exception):
    """Left out on purpose in this mode (--quick)."""


@dataclass(kw_only=True)
class Row:
    """One row of results.md; made with keywords only (``Row(group=..., item=..., value=...)``)."""

    group: str
    item: str
    value: float | None = None  # the median, in `unit`
    unit: str = ""  # "ms" or "s" (or "×" for a ratio-only row)
    runs: int = 0
    target: str = ""  # e.g. "≤ 50 ms"
    ok: bool | None = None  # None: no target for this row
    baseline: str = ""  # the ratio to the baseline measured in the same run
    note: str = ""
    status: str = ""  # "" when measured; else "not available: …", "skipped: …", "error: …"
    text: str = ""  # the median as written by an earlier run (a row kept by --keep)

    def median_text(self) -> str:
        if self.status:
            return self.status
        if self.text:
            return self.text
        if self.value is None:
            return "—"
        if self.unit == "ms":
            return f"{self.value:.1f} ms" if self.value < 100 else f"{self.value:.0f} ms"
        if self.unit == "s":
            return f"{self.value:.2f} s" if self.value < 10 else f"{self.value:.1f} s"
        return f"{self.value:.3g} {self.unit}".strip()

    def result_text(self) -> str:
        if self.status:
            return "—"
        return "—" if self.ok is None else ("pass" if self.ok else "**MISS**")


class Bench:
    """One run: its mode, the rows measured so far, and the figures the scale study is built from."""

    def __init__(self, quick: bool, class_size: int | None = None):
        self.quick = quick
        self.class_size = class_size or (QUICK_CLASS_SIZE if quick else CLASS_SIZE)
        self.rows: list[Row] = []
        self.facts: dict[str, float] = {}  # figures the scale study is built from
        self.scale_study: list[str] = []

    def runs(self, full: int, quick: int = 1) -> int:
        return quick if self.quick else full

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        print(f"  {row.item:58} {row.median_text():>14}  {row.result_text():8} {row.baseline}", flush=True)
        return row


@dataclass(frozen=True)
class Group:
    """A group of items measured together: its name on the command line (``--only train-step``), its title in
    the output, the function that measures it and adds its rows, and how it is measured, in results.md's words
    (a paragraph of its "How each item is measured"; "" for a group whose rows' notes say it all)."""

    name: str
    title: str
    run: Callable[[Bench], None]
    how: str = ""
