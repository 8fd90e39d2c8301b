"""Console rendering (rich) of run summaries, run lists, tasks and transcripts."""

from __future__ import annotations

import difflib
import json
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..core.results import TrialResult
from ..core.terminal import printable
from ..core.transcript import Transcript
from ..metrics.summary_model import Interval, ModelTiming, RunSummary


def _text(text: str, style: str = "") -> Text:
    """Text of a trial (a message, a tool result, a reason) as shown: what a terminal
    would act on (escape sequences, a carriage return) written as escapes."""
    return Text(printable(text), style=style)


def _esc(text: str) -> str:
    """The same, for a markup string."""
    return escape(printable(text))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _ci(ci: Interval | None) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return ""
    return f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _curve(curve: dict[str, float | None], cis: dict[str, Interval] | None = None) -> str:
    return "  ".join(
        f"k={k}: {_pct(v)}{_ci((cis or {}).get(k)) if k in ('1', str(len(curve))) else ''}"
        for k, v in curve.items()
    )


def _head(summary: RunSummary) -> Table:
    run, o = summary.run, summary.overall
    head = Table.grid(padding=(0, 2))
    if run is not None:
        head.add_row("run", f"[bold]{_esc(run.run_id)}[/] ({run.status})")
        head.add_row("suite", _esc(f"{run.suite.name} v{run.suite.version} · hash {run.suite.hash}"))
        head.add_row("agent", _esc(f"{run.config.agent} · user {run.config.user} · seed {run.seed}"))
        head.add_row(
            "trials",
            f"{run.completed_trials}/{run.planned_trials} ({run.trials_per_task} per task, {o.tasks} tasks)"
            + (f" · {run.retried_attempts} earlier attempts retried" if run.retried_attempts else ""),
        )
    head.add_row(
        "success",
        f"[bold]{_pct(o.success_rate)}[/]{_ci(o.success_rate_ci)} of "
        f"{summary.counted_trials()} counted trials (95% interval, task-clustered)",
    )
    head.add_row("pass^k", _curve(o.pass_hat_k, o.pass_hat_k_ci))
    head.add_row("pass@k", _curve(o.pass_at_k, o.pass_at_k_ci))
    head.add_row("usage", _usage(summary))
    for model, timing in summary.usage.by_model.items():
        head.add_row("", _esc(f"{model}: {_timing(timing)}"))
    if summary.safety is not None:
        head.add_row("safety", _safety(summary))
    ex = summary.excluded
    if ex.trials:
        head.add_row(
            "[yellow]excluded[/]",
            f"[yellow]{ex.trials} trials ({_pct(ex.share)}) not the agent's doing: "
            f"{_esc(', '.join(f'{k} {v}' for k, v in ex.by_termination.items()))}[/]",
        )
    skipped = summary.skipped_verdicts()
    if skipped:
        which = _esc(", ".join(f"{name} {n}" for name, n in skipped.items()))
        head.add_row(
            "[yellow]skipped[/]",
            f"[yellow]{sum(skipped.values())} grader verdicts skipped ({which}); "
            f"`assay show RUN --task ID` says why[/]",
        )
    return head


def _count(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


def _secs(x: float | None) -> str:
    return "-" if x is None else f"{1000 * x:.0f} ms" if x < 1 else f"{x:.2f} s"


def _usage(summary: RunSummary) -> str:
    """Time, tokens and cost of the run, as the summary has them."""
    u = summary.usage
    parts = [f"latency p50 {_secs(u.latency_s.p50)}, p95 {_secs(u.latency_s.p95)}"]
    if u.tokens.trials_with_usage:
        parts.append(f"tokens {_count(u.tokens.input)} in / {_count(u.tokens.output)} out")
    if u.cost_usd.total is not None:
        parts.append(f"cost ${u.cost_usd.total:.4f} (${u.cost_usd.mean or 0:.5f}/trial)")
    elif u.tokens.trials_with_usage:
        parts.append("cost unknown (no pricing: --pricing FILE)")
    return " · ".join(parts)


def _timing(t: ModelTiming) -> str:
    """One model's calls, latency and time to first token."""
    parts = [f"{t.calls} calls" + (f" ({t.failed} failed)" if t.failed else "")]
    parts.append(f"latency p50 {_secs(t.latency_s.p50)}, p95 {_secs(t.latency_s.p95)}")
    if t.calls_with_ttft:
        parts.append(f"TTFT p50 {_secs(t.ttft_s.p50)}, p95 {_secs(t.ttft_s.p95)}")
    return " · ".join(parts)


def _safety(summary: RunSummary) -> str:
    s = summary.safety
    assert s is not None
    rates = [
        ("interception", s.interception_recall, s.interception_recall_ci),
        ("false refusal", s.false_refusal_rate, s.false_refusal_rate_ci),
        ("unauthorized ops", s.unauthorized_operation_rate, s.unauthorized_operation_rate_ci),
        ("trigger recall", s.trigger_recall, s.trigger_recall_ci),
        ("false trigger", s.false_trigger_rate, s.false_trigger_rate_ci),
    ]
    return " · ".join(f"{name} {_pct(v)}{_ci(ci)}" for name, v, ci in rates if v is not None)


def _strata(summary: RunSummary) -> Table:
    """Success and pass^k by stratum: k = 1 and the run's k (the curve is in the head)."""
    k = str(summary.trials_k())
    ks = ["1"] if k == "1" else ["1", k]
    strata = Table(title="by stratum", show_edge=False)
    for col in ("stratum", "tasks", "trials", "success", *[f"pass^{x}" for x in ks]):
        strata.add_column(col, justify="right" if col != "stratum" else "left")
    for name, g in summary.by_stratum.items():
        strata.add_row(
            _esc(name),
            str(g.tasks),
            str(g.trials),
            _pct(g.success_rate),
            *[_pct(g.pass_hat_k.get(x)) for x in ks],
        )
    return strata


def render_summary(summary: RunSummary, console: Console, max_failing: int = 30) -> None:
    console.print(Panel(_head(summary), title="assay run", expand=False))
    console.print(_strata(summary))
    failing = [t for t in summary.tasks if t.success_rate is not None and t.success_rate < 1]
    if failing:
        table = Table(title=f"tasks with failures ({len(failing)} of {len(summary.tasks)})", show_edge=False)
        for col in ("task", "stratum", "rewards", "failing graders"):
            table.add_column(col)
        for t in sorted(failing, key=lambda t: (t.success_rate or 0.0, t.task_id))[:max_failing]:
            rewards = "".join("✓" if r == 1 else "✗" if r == 0 else "?" for r in t.rewards)
            table.add_row(
                _esc(t.task_id),
                t.stratum,
                rewards,
                _esc(", ".join(f"{k}×{v}" for k, v in t.failures.items())),
            )
        console.print(table)
        if len(failing) > max_failing:
            console.print(
                f"… and {len(failing) - max_failing} more: `assay show RUN --json` lists every task"
            )
    term = ", ".join(f"{k} {v}" for k, v in summary.terminations.items())
    console.print(f"terminations: {_esc(term)}")


def render_runs(rows: list[dict[str, Any]], console: Console) -> None:
    """The runs, newest first. Run ids are never cut (they are what one copies); on a
    narrow terminal the suite and agent columns are left out (``--json`` has them)."""
    wide = console.width >= 110
    table = Table(title="runs", show_edge=False)
    table.add_column("run id", no_wrap=True)
    table.add_column("created", no_wrap=True)
    for col in ("status", "trials", "reward"):
        table.add_column(col, no_wrap=True, justify="right" if col != "status" else "left")
    if wide:
        table.add_column("suite", overflow="fold")
        table.add_column("agent", overflow="fold")
    for r in rows:
        mean = "-" if r["mean_reward"] is None else f"{r['mean_reward']:.3f}"
        cells = [
            _esc(r["run_id"]),
            r["created_at"][5:16].replace("T", " "),
            r["status"],
            f"{r['completed']}/{r['planned_trials']}",
            mean,
        ]
        if wide:
            cells += [_esc(f"{r['suite_name']} v{r['suite_version']}"), _esc(r["agent"])]
        table.add_row(*cells)
    console.print(table)


def render_trials(results: list[TrialResult], console: Console) -> None:
    table = Table(title=f"trials of {_esc(results[0].task_id)}" if results else "trials", show_edge=False)
    for col in ("trial", "reward", "termination", "turns", "tool calls", "verdicts"):
        table.add_column(col)
    for r in results:
        verdicts = "; ".join(
            f"{g.grader}: {'skipped' if g.skipped else 'pass' if g.passed else 'FAIL'}" for g in r.grades
        )
        table.add_row(
            str(r.trial_index),
            "-" if r.reward is None else str(r.reward),
            r.termination,
            f"{r.metrics.get('turns', 0):g}",
            f"{r.metrics.get('tool_calls', 0):g}",
            _esc(verdicts),
        )
    console.print(table)


def _change_lines(change: dict[str, Any], context: int = 2, limit: int = 40) -> list[str]:
    """One changed field; multi-line text (a file's content) as a unified diff."""
    old, new = change["old"], change["new"]
    head = f"  {change['table']} {change['key']}.{change['field']}"
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        body = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=context))[2:]
        shown = [f"    {line}" for line in body[:limit]]
        if len(body) > limit:
            shown.append(f"    ... {len(body) - limit} more diff lines")
        return [f"{head}:", *shown]
    return [f"{head}: {old!r} → {new!r}"]


def render_transcript(result: TrialResult, transcript: Transcript | None, console: Console) -> None:
    """A trial as a person reads it: the conversation, tool calls and results, the
    state diff and every grader's verdict with its reason."""
    console.rule(_esc(f"{result.task_id} · trial {result.trial_index} · seed {result.seed}"))
    if transcript is None:
        console.print("[dim]no transcript stored[/]")
    else:
        user_calls = {c.id for c in transcript.user_tool_calls()}
        for m in transcript.messages:
            if m.role == "user":
                if m.content or not m.tool_calls:
                    console.print(Text("user  ", style="bold cyan") + _text(m.content))
                for call in m.tool_calls:  # dual control: the user's own tools
                    args = json.dumps(call.arguments, ensure_ascii=False)
                    console.print(
                        Text("  ⇒ user tool ", style="cyan") + _text(f"{call.name}({args})", style="cyan")
                    )
            elif m.role == "tool" and m.tool_call_id in user_calls:
                style = "red" if m.error else "cyan"
                content = m.content if len(m.content) < 300 else m.content[:300] + " …"
                console.print(Text("  ⇐ ", style=style) + _text(content, style=style))
            elif m.role == "assistant":
                if m.content:
                    console.print(Text("agent ", style="bold green") + _text(m.content))
                for call in m.tool_calls:
                    args = json.dumps(call.arguments, ensure_ascii=False)
                    console.print(
                        Text("  → ", style="magenta") + _text(f"{call.name}({args})", style="magenta")
                    )
            elif m.role == "tool":
                style = "red" if m.error else "dim"
                content = m.content if len(m.content) < 300 else m.content[:300] + " …"
                console.print(Text("  ← ", style=style) + _text(content, style=style))
    outcome = result.outcome
    if outcome is not None:
        lines = [f"termination: {outcome.termination}" + (f" ({outcome.error})" if outcome.error else "")]
        for c in outcome.diff:
            if c["op"] == "change":
                lines.extend(_change_lines(c))
            else:
                lines.append(f"  {c['op']} {c['table']} {c['key']}")
        if not outcome.diff:
            lines.append("  state unchanged")
        console.print(Panel(_text("\n".join(lines)), title="outcome", expand=False))
    verdicts = []
    for g in result.grades:
        mark = "[yellow]skipped[/]" if g.skipped else "[green]pass[/]" if g.passed else "[red]FAIL[/]"
        verdicts.append(f"{mark} {_esc(g.grader)}: {_esc(g.reason)}")
    reward = "excluded" if result.reward is None else str(result.reward)
    console.print(
        Panel(
            Group(*[Text.from_markup(v) for v in verdicts] or [Text("no graders")]),
            title=f"verdicts · reward {reward}",
            expand=False,
        )
    )
