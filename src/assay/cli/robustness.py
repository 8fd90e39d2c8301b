"""``assay robustness``: the same suite, agent and seed with and without tool faults."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..envs.registry import get_domain
from ..errors import AssayError
from ..runner import api
from ..runner.ray_executor import make_executor
from ..runner.resolve import resolve
from ..runner.robustness import robustness_report
from ..store.store import Store
from .app import JsonOpt, app, err, out, print_json, terminate_as_interrupt
from .run_options import build_spec, with_run_options


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(ci: list[float] | None) -> str:
    return "" if not ci else f" [{ci[0]:.3f}, {ci[1]:.3f}]"


def render_robustness(report: dict[str, Any]) -> None:
    """The comparison as console tables."""
    base, faulted = report["baseline"], report["faulted"]
    out.print(
        f"[bold]robustness[/] of {report['agent']} on {report['suite']} · k={report['k']} · "
        f"seed {report['seed']} · faults {report['plan']}"
    )
    out.print(
        f"runs: {report['runs']['baseline']} (without faults), {report['runs']['faulted']} (with faults)"
    )
    table = Table(show_edge=False)
    for col in ("metric", "without faults", "with faults", "drop [95% CI]"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    drop = report["success_rate_drop"]
    table.add_row(
        "success rate",
        _num(base["success_rate"]) + _ci(base["success_rate_ci"]),
        _num(faulted["success_rate"]) + _ci(faulted["success_rate_ci"]),
        _num(drop["estimate"]) + _ci(drop["ci"]),
    )
    for k, value in base["pass_hat_k"].items():
        d = report["pass_hat_k_drop"][k]
        table.add_row(
            f"pass^{k}", _num(value), _num(faulted["pass_hat_k"][k]), _num(d["estimate"]) + _ci(d["ci"])
        )
    out.print(table)
    faults = report["faults"]
    tools = "; ".join(
        f"{tool} " + ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        for tool, kinds in faults["by_tool"].items()
    )
    out.print(
        f"faults injected: {faults['injected']} in {faults['trials_with_faults']} trials · {tools or 'none'}"
    )
    rec, retries = report["recovery"], report["retries"]
    out.print(
        f"error recovery ({rec['trials']} faulted trials that pass without faults): "
        f"recovered {rec['recovered_by_retry'] + rec['recovered_other_way']} "
        f"(by retry {rec['recovered_by_retry']}, other way {rec['recovered_other_way']}) · "
        f"stopped safely {rec['stopped_safely']} · failed {rec['failed']} · "
        f"recovery rate [bold]{_num(rec['recovery_rate'])}[/]{_ci(rec['recovery_rate_ci'])} · "
        f"safe {_num(rec['safe_rate'])}"
    )
    kinds = ", ".join(
        f"{kind} {_num(c['recovery_rate'], 2)} of {c['trials']}" for kind, c in rec["by_kind"].items()
    )
    if kinds:
        out.print(escape(f"recovery by fault kind: {kinds}"))
    out.print(
        f"retries: {retries['retried']} of {retries['faults']} faulted calls retried "
        f"({retries['retry_succeeded']} went through)"
    )


@app.command()
@with_run_options
def robustness(
    suite: Annotated[
        str | None, typer.Argument(help="Suite folder, suite.yaml, or built-in name (retail).")
    ] = None,
    as_json: JsonOpt = False,
    *,
    options: dict[str, Any],
) -> None:
    """Run a suite without and with injected tool faults (--faults, default: the suite's);
    compare success, pass^k and error recovery. Both runs share every other option.

    Example: assay robustness retail -a builtin:retail-careful --faults get_order_details:timeout@0.3 -k 4
    """
    spec = build_spec(suite, options)
    resolved = resolve(spec)  # checks the spec (and the fault plan's tools) before anything runs
    if not resolved.fault_plan:
        raise AssayError("give --faults PLAN_FILE or TOOL:KIND@RATE,...; the suite declares no faults")
    plan = resolved.fault_plan
    base_spec = spec.model_copy(update={"faults": "none", "run_id": _named(spec.run_id, "nofaults")})
    faulted_spec = spec.model_copy(
        update={"faults": plan.model_dump(mode="json"), "run_id": _named(spec.run_id, "faults")}
    )
    st = Store(spec.store)
    runner = make_executor(spec.executor, spec.concurrency, spec.ray_address)  # one for both runs

    async def both() -> tuple[api.Run, api.Run]:
        runs = []
        for label, chosen in (("without faults", base_spec), ("with faults", faulted_spec)):
            if not as_json:
                err.print(escape(f"running {resolved.suite.name} {label}..."))
            runs.append(await api.run_async(chosen, store=st, executor=runner))
        return runs[0], runs[1]

    try:
        with terminate_as_interrupt():
            base, faulted = asyncio.run(both())
    finally:
        getattr(runner, "close", lambda: None)()
    transcripts = {
        r.key: t for r in faulted.results if (t := faulted.transcript(r.task_id, r.trial_index)) is not None
    }
    report = robustness_report(
        base.results,
        faulted.results,
        transcripts,
        k_max=base.info.trials_per_task,
        write_tools=get_domain(resolved.suite.domain).toolkit.write_tools(),
    )
    report.update(
        agent=resolved.config.agent,
        suite=resolved.suite.name,
        seed=base.info.seed,
        plan=plan.describe(),
        fault_plan=plan.model_dump(mode="json"),
        runs={"baseline": base.run_id, "faulted": faulted.run_id},
    )
    if as_json:
        print_json(report)
    else:
        render_robustness(report)


def _named(run_id: str | None, suffix: str) -> str | None:
    return None if run_id is None else f"{run_id}-{suffix}"
