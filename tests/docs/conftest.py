"""The docs test's summary: per page, commands run, shared, checked and skipped (with
reasons), printed at the end of the session."""

from __future__ import annotations

from typing import Any

from .runner import Outcome

#: page -> (outcomes, seconds), filled by test_commands.py
REPORT: dict[str, tuple[list[Outcome], float]] = {}


def summary_lines() -> list[str]:
    if not REPORT:
        return []
    lines = [f"{'page':<24} {'cmds':>4} {'run':>4} {'shared':>6} {'checked':>7} {'skipped':>7} {'seconds':>7}"]
    totals = [0, 0, 0, 0, 0, 0.0]
    skips: list[str] = []
    for page, (outcomes, seconds) in sorted(REPORT.items()):
        counts = [sum(o.status == s for o in outcomes) for s in ("run", "shared", "checked", "skipped")]
        lines.append(f"{page:<24} {len(outcomes):>4} {counts[0]:>4} {counts[1]:>6} {counts[2]:>7} {counts[3]:>7} {seconds:>7.1f}")
        for i, n in enumerate([len(outcomes), *counts]):
            totals[i] += n
        totals[5] += seconds
        skips += [f"  {o.where}: {o.source}  -- {o.detail}" for o in outcomes if o.status == "skipped"]
    n, run, shared, checked, skipped, seconds = totals
    lines.append(f"{'total':<24} {n:>4} {run:>4} {shared:>6} {checked:>7} {skipped:>7} {seconds:>7.1f}")
    if skips:
        lines += ["skipped (docs-test skip markers):", *skips]
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = summary_lines()
    if lines:
        terminalreporter.section("docs commands")
        for line in lines:
            terminalreporter.write_line(line)
