"""Flag-matrix experiments: ``assay run --flag a=off/on --flag b=off/on`` (or its alias
``--flag-matrix a=off,on``) runs every arm;
``assay experiment show|list`` analyses them (main effects, interactions)."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any

import typer
from rich.table import Table

from ..core.spec import RunSpec
from ..errors import AssayError
from ..lifecycle.factorial import arm_label, arms_of, factorial_effects
from ..runner import api
from ..runner.provenance import new_run_id
from ..runner.ray_executor import make_executor
from ..runner.resolve import resolve
from ..store.experiments import list_experiments, load_experiment, write_experiment
from ..store.store import Store, now_iso
from .app import JsonOpt, StoreOpt, app, err, out, print_json, terminate_as_interrupt

experiment_app = typer.Typer(
    help="Flag-matrix experiments (assay run --flag NAME=A/B ...).", no_args_is_help=True
)
app.add_typer(experiment_app, name="experiment")


def _slug(levels: dict[str, Any]) -> str:
    return "-".join(
        re.sub(r"[^A-Za-z0-9_.]+", "_", f"{k}_{arm_label({k: v}).split('=', 1)[1]}")
        for k, v in levels.items()
    )


def run_matrix(spec: RunSpec, as_json: bool) -> None:
    """One run per combination of the spec's flag levels (each its own configuration,
    sharing the suite, seed and every other option), then the factorial analysis."""
    resolved = resolve(spec)  # a bad spec fails before the first arm runs
    experiment_id = spec.run_id or new_run_id(resolved.suite.name).replace(
        resolved.suite.name, f"{resolved.suite.name}-exp", 1
    )
    st = Store(spec.store)
    runner = make_executor(spec.executor, spec.concurrency, spec.ray_address)
    arms = arms_of(spec.flag_matrix)
    document: dict[str, Any] = {
        "schema": "assay.experiment/1",
        "experiment_id": experiment_id,
        "created_at": now_iso(),
        "suite": resolved.suite.name,
        "spec": spec.redacted().model_dump(mode="json"),
        "factors": spec.flag_matrix,
        "arms": [],
    }

    async def all_arms() -> list[api.Run]:
        runs = []
        for levels in arms:
            arm_spec = spec.model_copy(
                update={
                    "flags": {**spec.flags, **levels},
                    "flag_matrix": {},
                    "run_id": f"{experiment_id}-{_slug(levels)}",
                }
            )
            if not as_json:
                err.print(f"arm {arm_label(levels)}: run {arm_spec.run_id}")
            run = await api.run_async(arm_spec, store=st, executor=runner)
            runs.append(run)
            document["arms"].append(
                {"flags": levels, "run_id": run.run_id, "config_hash": run.info.config_hash}
            )
            write_experiment(st, document)  # an interrupted experiment keeps the arms it ran
        return runs

    try:
        with terminate_as_interrupt():
            runs = asyncio.run(all_arms())
    finally:
        getattr(runner, "close", lambda: None)()
    analysis = factorial_effects(
        spec.flag_matrix, [(levels, run.results) for levels, run in zip(arms, runs, strict=True)]
    )
    _show({**document, "analysis": analysis}, as_json)


def _analysis(st: Store, document: dict[str, Any]) -> dict[str, Any]:
    factors = document["factors"]
    expected = len(arms_of(factors))
    if len(document["arms"]) < expected:
        raise AssayError(
            f"experiment {document['experiment_id']} has {len(document['arms'])} of {expected} arms "
            "(it was interrupted); run the experiment again (assay run --flag NAME=A/B ...) "
            "with a new --run-id"
        )
    arms = [(arm["flags"], api.Run.load(arm["run_id"], st).results) for arm in document["arms"]]
    return factorial_effects(factors, arms)


def _fmt(term: dict[str, Any]) -> tuple[str, str, str]:
    ci = term["ci"]
    return (
        f"{term['effect']:+.3f}",
        "–" if ci is None else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]",
        "–" if term["p_value"] is None else f"{term['p_value']:.3g}",
    )


def _show(document: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(document)
        return
    a = document["analysis"]
    out.print(
        f"[bold]experiment {document['experiment_id']}[/] on {document['suite']} · {len(a['arms'])} arms · "
        f"{a['tasks']} tasks in every arm · reference: "
        + ", ".join(f"{k}={v}" for k, v in a["reference"].items())
    )
    arms = Table(title="arms", show_edge=False)
    for col in ("arm", "run", "trials", "success [95% CI]"):
        arms.add_column(col)
    runs = {arm_label(x["flags"]): x["run_id"] for x in document["arms"]}
    for row in a["arms"]:
        ci = row["ci"]
        rate = "–" if row["success_rate"] is None else f"{row['success_rate']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
        arms.add_row(row["arm"], runs.get(row["arm"], ""), str(row["trials"]), rate)
    out.print(arms)
    effects = Table(title="effects on success (per-task contrasts)", show_edge=False)
    for col in ("term", "effect", "95% CI", "p"):
        effects.add_column(col, justify="left" if col == "term" else "right")
    for term in [*a["main_effects"], *a["interactions"]]:
        effects.add_row(term["term"], *_fmt(term))
    out.print(effects)
    for note in a["notes"]:
        err.print(note)


@experiment_app.command()
def show(
    experiment_id: Annotated[str, typer.Argument(help="Experiment id (see assay experiment list).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Main effects and interactions of an experiment's flags, with intervals.

    Example: assay experiment show retail-exp-20260101-120000-abc123 --json
    """
    st = Store(store)
    document = load_experiment(st, experiment_id)
    _show({**document, "analysis": _analysis(st, document)}, as_json)


@experiment_app.command("list")
def list_cmd(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Experiments in the store, newest first."""
    docs = list_experiments(Store(store))
    rows = [
        {
            "experiment_id": d["experiment_id"],
            "created_at": d["created_at"],
            "suite": d["suite"],
            "factors": d["factors"],
            "arms": len(d["arms"]),
        }
        for d in docs
    ]
    if as_json:
        print_json(rows)
        return
    for r in rows:
        out.print(
            f"{r['experiment_id']}  {r['suite']}  {r['arms']} arms  "
            + " × ".join(f"{k}{v}" for k, v in r["factors"].items())
        )
