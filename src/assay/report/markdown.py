"""Markdown summaries of a gate verdict and of a comparison, for a pull-request comment.

The same text is what the console shows (rendered by rich), so a CI log and the PR
comment say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..compare import Comparison, MetricRow, PairResult, format_p
from ..compare.planning import Plan
from ..gate import Verdict

if TYPE_CHECKING:  # an annotation only: importing it imports the runner (assay compare does not need it)
    from ..compare.adaptive_result import AdaptiveResult

ICONS = {"pass": "✅", "fail": "❌", "skip": "⏭️"}
MAX_LIST = 15
MAX_TAGS = 8


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> list[str]:
    aligns = [("---:" if align[i : i + 1] == "r" else "---") for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(aligns) + " |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _p(p: float | None) -> str:
    """``<0.001`` or ``0.03`` (for table cells)."""
    return format_p(p).removeprefix("p").removeprefix("=")


def _short_where(where: str) -> str:
    """``gate.yaml:16`` from ``path/to/gate.yaml:16``."""
    return where.replace("\\", "/").rsplit("/", 1)[-1]


def _distinct(reasons: Sequence[str], limit: int = 2, width: int = 240) -> str:
    """Distinct failure reasons (the ``trial i:`` prefix dropped), with their counts."""
    counts: dict[str, int] = {}
    for reason in reasons:
        text = reason.split(": ", 1)[1] if reason.startswith("trial ") and ": " in reason else reason
        counts[text] = counts.get(text, 0) + 1
    parts = []
    for text, n in list(counts.items())[:limit]:
        short = text if len(text) <= width else text[: width - 1] + "…"
        parts.append(short + (f" (×{n})" if n > 1 else ""))
    more = len(counts) - limit
    return " · ".join(parts) + (f" · {more} other reason(s)" if more > 0 else "")


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.4g}"


def gate_markdown(verdict: Verdict) -> str:
    """PR comment for a gate verdict: headline, table of checks, high-risk failures."""
    icon = "✅" if verdict.passed else "❌"
    word = "passed" if verdict.passed else "failed"
    counts = verdict.counts()
    lines = [
        f"## {icon} assay gate {word}: {verdict.policy_name} v{verdict.policy_version}",
        "",
        f"run `{verdict.run_id}` ({verdict.agent})"
        + (f" · baseline `{verdict.baseline}`" if verdict.baseline else "")
        + f" · policy `{verdict.policy_file}` (hash `{verdict.policy_hash}`)",
        "",
        f"{counts['pass']} passed · {counts['fail']} failed · {counts['skip']} skipped",
        "",
    ]
    lines += _table(
        ["", "check", "result", "policy"],
        ([ICONS[c.status], c.name, c.reason, _short_where(c.where)] for c in verdict.checks),
    )
    for check in verdict.checks:
        failing = check.details.get("failing_tasks") if check.kind == "high_risk" else None
        if not failing:
            continue
        lines += ["", f"### {ICONS['fail']} {check.name}: {len(failing)} task(s) failing", ""]
        for task in failing[:MAX_LIST]:
            lines.append(
                f"- `{task['task_id']}` ({task['successes']}/{task['trials']} trials passed): "
                + _cell(_distinct(task["reasons"]))
            )
        if len(failing) > MAX_LIST:
            lines.append(f"- … and {len(failing) - MAX_LIST} more")
    if verdict.notes:
        lines += ["", *(f"> {note}" for note in verdict.notes)]
    return "\n".join(lines) + "\n"


def _delta(row: MetricRow) -> str:
    if row.delta is None:
        return "–"
    if row.metric == "quality":
        text = f"{100 * row.delta:+.1f} pts"
        ci = "" if row.low is None else f" [{100 * row.low:+.1f}, {100 * row.high:+.1f}]"  # type: ignore[operator]
        return text + ci
    text = f"{row.delta:+.4g}"
    if row.relative is not None:
        text += f" ({100 * row.relative:+.0f}%)"
    if row.low is not None:
        text += f" [{row.low:+.3g}, {row.high:+.3g}]"
    return text


def _value(row: MetricRow, x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.1%}" if row.metric in ("quality", "success_rate") else f"{x:.4g}"


def _moved(row: MetricRow, alpha: float) -> str:
    if not row.significant(alpha) or row.improved is None:
        return "≈" if row.p_value is not None else ""
    return "▲ better" if row.improved else "▼ worse"


def _metric_rows(rows: list[MetricRow], alpha: float) -> list[str]:
    body = []
    for r in rows:
        if r.skipped and r.p_value is None:
            body.append([r.label, "–", "–", f"skipped: {r.skipped}", "", "", ""])
        else:
            body.append(
                [
                    r.label,
                    _value(r, r.a),
                    _value(r, r.b),
                    _delta(r),
                    _p(r.p_adjusted if r.p_adjusted is not None else r.p_value),
                    _moved(r, alpha),
                    str(r.n),
                ]
            )
    return _table(["metric", "A", "B", "Δ B − A (CI)", "p (adj.)", "", "n"], body, " rrrr r")


def _pair_markdown(pair: PairResult, comparison: Comparison) -> list[str]:
    p = pair.pairing
    alpha = comparison.alpha
    unit = f"{p.n_units} tasks" if p.match == "task" else f"{p.n_units} trial pairs over {p.n_tasks} tasks"
    quality = pair.quality
    lines = [
        f"### {pair.name} vs baseline",
        "",
        f"**Decision ({pair.decision.verdict.replace('_', ' ')}):** {pair.decision.line}",
        "",
        f"A = `{p.a.run_id}` ({p.a.label}), B = `{p.b.run_id}` ({p.b.label}); paired on {unit}; "
        f"quality: {quality.test}.",
        *(f"> {note}" for note in p.notes),
        "",
    ]
    primary = [r for r in pair.rows if r.family == "primary"]
    secondary = [r for r in pair.rows if r.family == "secondary"]
    lines += _metric_rows(primary, alpha)
    if secondary:
        lines += ["", f"<details><summary>Other metrics ({len(secondary)})</summary>", ""]
        lines += _metric_rows(secondary, alpha)
        lines += ["", "</details>"]
    changed = [g for g in pair.groups if g.only_a or g.only_b]
    tags = sorted((g for g in changed if g.by == "tag"), key=lambda g: (g.p_adjusted or 1.0, -abs(g.delta)))
    moved = [g for g in changed if g.by != "tag"] + tags[:MAX_TAGS]
    if moved:
        lines += ["", "#### Where it changed (tasks solved)", ""]
        lines += _table(
            ["slice", "tasks", "A", "B", "Δ", "only A / only B", "p (adj.)"],
            (
                [
                    f"{g.by} {g.group}",
                    g.tasks,
                    f"{g.a:.0%}",
                    f"{g.b:.0%}",
                    f"{100 * g.delta:+.1f} pts",
                    f"{g.only_a} / {g.only_b}",
                    _p(g.p_adjusted),
                ]
                for g in moved
            ),
            " rrrrrr",
        )
        if len(tags) > MAX_TAGS:
            lines.append(f"\n{len(tags) - MAX_TAGS} more tag(s) changed: see `--json`.")
    for title, flips in (
        ("fixed (B solves, A did not)", pair.fixed),
        ("broken (A solved, B does not)", pair.broken),
    ):
        if flips:
            shown = ", ".join(
                f"`{f.task_id}` {f.a_successes}/{f.a_trials}→{f.b_successes}/{f.b_trials}"
                for f in flips[:MAX_LIST]
            )
            more = f" … and {len(flips) - MAX_LIST} more" if len(flips) > MAX_LIST else ""
            lines += ["", f"**{len(flips)} {title}:** {shown}{more}"]
    if pair.sensitivity:
        lines += [
            "",
            "**The verdict depends on the box:** "
            + "; ".join(
                f"{s['metric']} τ ×{s['factor']:g} → {s['verdict'].replace('_', ' ')}"
                for s in pair.sensitivity
            ),
        ]
    return lines


def _box_markdown(comparison: Comparison) -> list[str]:
    box = comparison.box
    if box is None:
        return []
    prof = box.profile
    lines = ["", f"### Box score: profile {prof.name} v{prof.version} (hash `{prof.hash}`)", ""]
    if box.skipped:
        lines += [
            "Skipped (not measured on every trial, never counted as zero): "
            + "; ".join(f"`{m}`: {why}" for m, why in box.skipped.items()),
            "",
        ]
    if not box.scores:
        return [*lines, "No profile metric could be scored."]
    labels = [r.label for r in comparison.runs]
    names = {r.run_id: r.label if labels.count(r.label) == 1 else f"`{r.run_id}`" for r in comparison.runs}
    lines += _table(
        ["rank", "run", "RMSLoss (95% CI)", "median loss", "outside the box"],
        (
            [
                i + 1,
                names.get(s.config, s.config),
                f"{s.rms_loss:.3f} [{s.low:.3f}, {s.high:.3f}]",
                f"{s.median_loss:.3f}",
                f"{s.tail_share:.1%}",
            ]
            for i, s in enumerate(box.scores)
        ),
        "  rrr",
    )
    if box.stable:
        lines += ["", "Ranking stable when any one weight or threshold moves ±20%."]
    elif box.flips:
        lines += [
            "",
            "**Ranking changes** when: "
            + "; ".join(
                f"{f['metric']} {f['parameter']} ×{f['factor']:g} → {' > '.join(f['ranking'])}"
                for f in box.flips[:8]
            ),
        ]
    return lines


def compare_markdown(comparison: Comparison) -> str:
    """PR comment for a comparison: decision lines, paired metrics, slices, flips, box."""
    base = comparison.baseline
    tests = comparison.tests
    lines = [
        f"## assay compare: baseline `{base.run_id}` ({base.label})",
        "",
        *(f"- **{p.name}:** {p.decision.line}" for p in comparison.pairs),
        "",
        f"p-values: {comparison.adjust_name}-adjusted within each family across all candidates "
        f"(primary: quality and box metrics, {tests.get('primary', 0)} tests; secondary: "
        f"{tests.get('secondary', 0)} tests); alpha {comparison.alpha:g}; "
        f"intervals {comparison.confidence:.0%}.",
        "",
    ]
    for pair in comparison.pairs:
        lines += [*_pair_markdown(pair, comparison), ""]
    lines += _box_markdown(comparison)
    return "\n".join(lines).rstrip() + "\n"


def plan_markdown(plan: Plan) -> str:
    """What a plan needs and what the suite can detect, in a few lines."""
    lines = [f"## assay plan ({plan.design}, alpha {plan.alpha:g}, power {plan.power:g})", ""]
    if plan.margin is not None:
        goal = (
            f"to show not worse than {plan.baseline:.1%} by {100 * plan.margin:.1f} pts "
            f"(true rate {plan.target:.1%})"
        )
        if plan.design == "noninferiority-paired":
            lines.append(f"- {goal}: **{plan.tasks_needed} tasks** run by both configurations")
        else:
            lines.append(
                f"- {goal}: **{plan.trials_per_arm} independent trials per arm** = "
                f"**{plan.tasks_needed} tasks × {plan.k} trials** per configuration"
            )
        lines += [f"- {note}" for note in plan.notes]
        return "\n".join(lines) + "\n"
    if plan.mde is not None:
        target = f"{plan.baseline:.1%} → {plan.target:.1%} ({100 * plan.mde:+.1f} pts)"
        if plan.design == "paired":
            lines.append(f"- to detect {target}: **{plan.tasks_needed} tasks** run by both configurations")
        else:
            lines.append(
                f"- to detect {target}: **{plan.trials_per_arm} independent trials per arm** = "
                f"**{plan.tasks_needed} tasks × {plan.k} trials** per configuration"
            )
            others = ", ".join(f"{t} × {k}" for t, k in plan.options if k != plan.k)
            if others:
                lines.append(f"- other ways to get there (tasks × trials): {others}")
    if plan.suite_tasks:
        size = f"{plan.suite_tasks} tasks × {plan.k} trials"
        if plan.detectable is None:
            lines.append(f"- the suite ({size}) is too small to detect any change from {plan.baseline:.1%}")
        else:
            lines.append(f"- the suite ({size}) can detect a change of ≥ **{100 * plan.detectable:.1f} pts**")
    lines += [f"- {note}" for note in plan.notes]
    return "\n".join(lines) + "\n"


def adaptive_markdown(result: AdaptiveResult) -> str:
    """The outcome of an adaptive run: decision, trials run and needed, the saving
    against the fixed design, the test."""
    d = result.design
    unit = "trials" if result.mode == "rate" else "discordant pairs"
    lines = [
        f"## assay run --until-decided: run `{result.run.run_id}`",
        "",
        f"**{result.verdict.replace('_', ' ')}:** {result.line}",
        "",
        f"- trials run: **{result.trials_run}**; the decision needed {result.trials_needed} "
        f"(the other {result.trials_run - result.trials_needed} were in flight); budget {result.budget}, "
        f"rounds of {result.round_size}",
    ]
    fixed = result.fixed
    if fixed is not None and fixed.n and result.saved is not None and result.saved_needed is not None:
        lines.append(
            f"- fixed design of the same alpha and power: {fixed.n} trials ({fixed.basis}); "
            f"**{result.saved:.0%} saved** ({result.saved_needed:.0%} counting only the trials needed)"
        )
    elif fixed is not None and fixed.n:
        lines.append(
            f"- fixed design of the same alpha and power: {fixed.n} trials ({fixed.basis}); no decision yet"
        )
    elif fixed is not None:
        lines.append(f"- fixed design: none to compare with ({fixed.basis})")
    if result.mode == "paired" and result.pairs:
        observed = (result.discordant or 0) / result.pairs
        text = (
            f"- discordance: the runs disagreed on {result.discordant} of the {result.pairs} pairs read "
            f"({observed:.1%})"
        )
        if result.discordance_design is not None:
            how = (
                "--discordance"
                if result.discordance_given
                else "the discordance seen so far, alpha spent exactly"
            )
            text += f"; the SPRT was designed for {result.discordance_design:.2f} ({how})"
        lines.append(text)
    if d is not None:
        raised = result.design_power is not None and result.design_power > result.power + 1e-9
        why = (
            f" (designed for power {result.design_power:g}, {result.power:g} asked: estimating the "
            "discordance costs power)"
            if raised
            else ""
        )
        lines.append(
            f"- design: calibrated SPRT, exact alpha {d.exact_alpha:.3f}, power {d.exact_power:.3f}{why}; "
            f"expected {d.asn_h0:.0f} {unit} under H0 and {d.asn_h1:.0f} under H1 vs {d.fixed_steps} "
            "for a fixed design"
        )
    elif result.method == "msprt":
        lines.append("- design: always-valid mixture SPRT on discordant pairs (valid under any peeking)")
    if result.always_valid_p is not None:
        lines.append(f"- always-valid p (mixture SPRT on discordant pairs): {result.always_valid_p:.3g}")
    shown = result.rounds if len(result.rounds) <= 6 else [*result.rounds[:2], None, *result.rounds[-3:]]
    for r in shown:
        if r is None:
            lines.append(f"- ... ({len(result.rounds) - 5} rounds)")
        else:
            lines.append(
                f"- round {r.round}: {r.trials} trials read, {r.state.steps} {unit}, {r.state.decision}"
            )
    return "\n".join(lines) + "\n"
