"""The docs test's summary: per page, commands run, shared, checked and skipped (with
reasons), printed at the end of the session."""

from __future__ import annotations

from typing import Any

from .runner import Outcome

#: page -> (outcomes, seconds), filled by test_commands.py
REPORT: dict[str, tuple[list[Outcome], float]] = {}
STATUSES = ("run", "shared", "checked", "skipped")


def row(page: str, *cells: object) -> str:
    widths = (4, 4, 6, 7, 7, 7)
    return f"{page:<24} " + " ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))


def summary_lines() -> list[str]:
    if not REPORT:
        return []
    lines = [row("page", "cmds", *STATUSES, "seconds")]
    totals: list[float] = [0] * 6
    skips: list[str] = []
    for page, (outcomes, seconds) in sorted(REPORT.items()):
        counts = [len(outcomes), *(sum(o.status == s for o in outcomes) for s in STATUSES), seconds]
        lines.append(row(page, *counts[:5], f"{seconds:.1f}"))
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
        skips += [f"  {o.where}: {o.source}  -- {o.detail}" for o in outcomes if o.status == "skipped"]
    lines.append(row("total", *(int(t) for t in totals[:5]), f"{totals[5]:.1f}"))
    if skips:
        lines += ["skipped (docs-test skip markers):", *skips]
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = summary_lines()
    if lines:
        terminalreporter.section("docs commands")
        for line in lines:
            terminalreporter.write_line(line)
