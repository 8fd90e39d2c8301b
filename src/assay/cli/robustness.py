"""``assay robustness``: the same suite, agent and seed with and without tool faults."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..core.spec import RunSpec
from ..envs.perturb import Perturbation, load_perturbations
from ..envs.registry import get_domain
from ..errors import AssayError
from ..lifecycle.metamorphic import perturbation_report
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
    With --perturb: the unperturbed run, then one run per perturbation, each checked
    against its metamorphic relation (violation rate with a 95% interval).

    Example: assay robustness retail -a builtin:retail-careful --faults get_order_details:timeout@0.3 -k 4
    Example: assay robustness retail -a builtin:retail-careful --perturb typos,casing,distractor,inject -k 2
    """
    _robustness(build_spec(suite, options), as_json)


def _robustness(spec: RunSpec, as_json: bool) -> None:
    if spec.flag_matrix:
        raise AssayError(
            "crossed flags (--flag NAME=A/B, --flag-matrix) run an experiment with plain assay run, "
            "not robustness"
        )
    if spec.perturb is not None and load_perturbations(spec.perturb):
        _perturbed(spec, as_json)
        return
    resolved = resolve(spec)  # checks the spec (and the fault plan's tools) before anything runs
    if not resolved.fault_plan:
        raise AssayError(
            "give --faults PLAN_FILE or TOOL:KIND@RATE,... (or --perturb KIND,...); "
            "the suite declares no faults"
        )
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
        write_tools=get_domain(resolved.suite.domain_ref).toolkit.write_tools("agent"),
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


def _perturbed(spec: RunSpec, as_json: bool) -> None:
    """The unperturbed run, then one run per perturbation (same suite, configuration,
    seed and faults), each checked against its metamorphic relation, paired by trial."""
    plan = load_perturbations(spec.perturb)
    assert plan is not None
    resolved = resolve(spec)  # checks everything before the first trial
    st = Store(spec.store)
    runner = make_executor(spec.executor, spec.concurrency, spec.ray_address)
    specs: list[tuple[str, Perturbation | None, RunSpec]] = [
        (
            "unperturbed",
            None,
            spec.model_copy(update={"perturb": None, "run_id": _named(spec.run_id, "base")}),
        )
    ]
    for i, p in enumerate(plan.perturbations):
        single = plan.single(p).model_dump(mode="json")
        specs.append(
            (
                p.label,
                p,
                spec.model_copy(update={"perturb": single, "run_id": _named(spec.run_id, f"p{i + 1}")}),
            )
        )

    async def every() -> list[api.Run]:
        runs = []
        for label, _, chosen in specs:
            if not as_json:
                err.print(f"running {resolved.suite.name}: {label}...")
            runs.append(await api.run_async(chosen, store=st, executor=runner))
        return runs

    try:
        with terminate_as_interrupt():
            runs = asyncio.run(every())
    finally:
        getattr(runner, "close", lambda: None)()
    base = runs[0]
    report = perturbation_report(
        base.results,
        {
            label: (p.expects, run.results, p.ignore)
            for (label, p, _), run in zip(specs[1:], runs[1:], strict=True)
            if p
        },
        runs={
            "unperturbed": base.run_id,
            **{label: run.run_id for (label, _, _), run in zip(specs[1:], runs[1:], strict=True)},
        },
    )
    report.update(
        agent=resolved.config.agent,
        suite=resolved.suite.name,
        seed=base.info.seed,
        k=base.info.trials_per_task,
    )
    if as_json:
        print_json(report)
    else:
        render_perturbations(report)


def render_perturbations(report: dict[str, Any]) -> None:
    out.print(
        f"[bold]perturbations[/] of {report['agent']} on {report['suite']} · k={report['k']} · "
        f"seed {report['seed']} · "
        f"unperturbed run {report['runs']['unperturbed']}"
    )
    table = Table(show_edge=False)
    for col in (
        "perturbation",
        "relation",
        "pairs",
        "violations",
        "rate [95% CI]",
        "pass→fail",
        "fail→pass",
        "success",
    ):
        table.add_column(col, justify="left" if col in ("perturbation", "relation") else "right")
    for row in report["perturbations"]:
        s = row["success_rate"]
        table.add_row(
            row["perturbation"],
            row["relation"],
            str(row["checked"]),
            str(row["violations"]),
            _num(row["violation_rate"]) + _ci(row["violation_rate_ci"]),
            str(row["pass_to_fail"]),
            str(row["fail_to_pass"]),
            f"{_num(s['unperturbed'])} → {_num(s['perturbed'])}",
        )
    out.print(table)
    inv = report["invariance"]
    out.print(
        f"invariance relations: {inv['violations']} violations in {inv['checked']} pairs "
        f"(rate {_num(inv['violation_rate'])}); excluded pairs are not counted"
    )
