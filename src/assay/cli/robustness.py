"""``assay robustness``: the same suite, agent and seed with and without tool faults."""

from __future__ import annotations

import asyncio
import inspect
from typing import Annotated, Any

import typer
from rich.table import Table

from ..envs.faults import FaultPlan, load_fault_plan
from ..envs.registry import get_domain
from ..errors import AssayError, HarnessError
from ..runner import api
from ..runner.ray_executor import make_executor
from ..runner.robustness import robustness_report
from ..store.store import Store
from ..suites.loader import load_suite
from .app import JsonOpt, StoreOpt, app, err, out, parse_params, print_json


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
        out.print(f"recovery by fault kind: {kinds}")
    out.print(
        f"retries: {retries['retried']} of {retries['faults']} faulted calls retried "
        f"({retries['retry_succeeded']} went through)"
    )


@app.command()
def robustness(
    suite: Annotated[str, typer.Argument(help="Suite folder, suite.yaml, or built-in name (retail).")],
    agent: Annotated[
        str, typer.Option("--agent", "-a", help="Agent spec: builtin:NAME, python:module:factory, ...")
    ] = "builtin:retail-careful",
    faults: Annotated[
        str | None,
        typer.Option("--faults", help="Fault plan file or TOOL:KIND@RATE,... (default: the suite's faults)."),
    ] = None,
    trials: Annotated[
        int | None, typer.Option("--trials", "-k", min=1, help="Trials per task (default: the suite's).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Run seed, shared by both runs.")] = 0,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", min=1, help="Trials running at once.")
    ] = 8,
    executor: Annotated[str, typer.Option("--executor", help="local or ray (docs/scale.md).")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster address.")] = None,
    user: Annotated[str, typer.Option("--user", help="User simulator spec.")] = "scripted",
    split: Annotated[str | None, typer.Option("--split", help="Only tasks of this split.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Only tasks with this tag (repeatable).")
    ] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task id (repeatable).")] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Config parameter KEY=VALUE.")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a suite without and with injected tool faults; compare success, pass^k and
    error recovery.

    Example: assay robustness retail -a builtin:retail-careful --faults get_order_details:timeout@0.3 -k 4
    """
    loaded = load_suite(suite)
    plan = load_fault_plan(faults) if faults is not None else load_fault_plan(_declared(loaded))
    if not plan:
        raise AssayError("give --faults PLAN_FILE or TOOL:KIND@RATE,...; the suite declares no faults")
    if "faults" not in inspect.signature(api.run_async).parameters:  # until runs carry fault plans
        raise HarnessError("this build of assay cannot inject faults into runs (run_async has no faults=)")
    st = Store(store)
    runner = make_executor(executor, concurrency, ray_address)
    common: dict[str, Any] = {
        "user": user,
        "split": split,
        "tags": tag or (),
        "task_ids": task or (),
        "params": parse_params(param or []),
        "executor": runner,
    }

    async def both() -> tuple[api.Run, api.Run]:
        runs = []
        for label, chosen in (("without faults", FaultPlan()), ("with faults", plan)):
            if not as_json:
                err.print(f"running {loaded.name} {label}...")
            options = {**common, "faults": chosen}  # the fault plan of this run (docs/robustness.md)
            runs.append(await api.run_async(suite, agent, trials, concurrency, seed, st, **options))
        return runs[0], runs[1]

    try:
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
        write_tools=get_domain(loaded.domain).toolkit.write_tools(),
    )
    report.update(
        agent=agent,
        suite=loaded.name,
        seed=seed,
        plan=plan.describe(),
        fault_plan=plan.model_dump(mode="json"),
        runs={"baseline": base.run_id, "faulted": faulted.run_id},
    )
    if as_json:
        print_json(report)
    else:
        render_robustness(report)


def _declared(suite: Any) -> Any:
    return getattr(suite.defaults, "faults", None)
