"""``assay regrade FILE --format tau2``: a peer benchmark's recorded runs graded by assay
and stored as ordinary runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import AssayError
from .app import JsonOpt, StoreOpt, app, err, out, print_json


@app.command()
def regrade(
    file: Annotated[Path, typer.Argument(help="A results file of the peer benchmark.")],
    format: Annotated[str, typer.Option("--format", help="The file's format (tau2).")] = "tau2",
    suite: Annotated[
        Path | None, typer.Option("--suite", help="The imported suite (assay import tau2 ...).")
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Without --suite: tau2's data folder, imported for the occasion."),
    ] = None,
    store: StoreOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Store the run under this id.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Replay a results file's simulations on assay's port, grade them with assay's
    graders, store them as a run, and print the agreement with the recorded verdicts.

    Example: assay regrade airline_gpt-4.1.json --format tau2 --suite tau2-airline --run-id gpt41
    """
    if format != "tau2":
        raise AssayError(f"--format {format!r}: the formats regrade reads are: tau2")
    from ..domains.tau2.regrade import regrade_tau2

    report = regrade_tau2(file, suite=suite, data=data, store=store, run_id=run_id)
    if as_json:
        print_json(report.to_dict())
    else:
        _print(report)
    if report.mismatches or report.flow or any(a.disagreements for a in report.agreement.values()):
        raise typer.Exit(1)  # the port or the graders do not reproduce the recording


def _print(report: object) -> None:
    from ..domains.tau2.regrade import RegradeReport

    assert isinstance(report, RegradeReport)
    out.print(
        f"regraded {report.simulations} simulations of {escape(report.model)} ({report.domain}) "
        f"as run {escape(report.run_id)} in {escape(report.store)}"
    )
    reproduced = report.tool_outputs - len(report.mismatches)
    out.print(f"tool outputs reproduced: {reproduced}/{report.tool_outputs}")
    for m in report.mismatches[:20]:
        err.print(
            f"  mismatch: simulation {escape(m.simulation_id)} message {m.message_index} "
            f"{escape(m.requestor)}:{escape(m.tool)}: recorded {escape(m.expected[:120])!r}, "
            f"replayed {escape(str(m.got)[:120])!r}"
        )
    for line in report.flow[:20]:
        err.print(f"  conversation differs: {escape(line)}")
    for name, a in report.agreement.items():
        if a.compared == 0:
            continue
        check = report.evaluator[name]
        out.print(
            f"{name:<15} agreement {a.agreed}/{a.compared}  (port evaluator {check.agreed}/{check.compared})"
        )
        for line in a.disagreements[:10]:
            err.print(f"  differs: {escape(line)}")
    if report.needs_judge:
        out.print(f"reward not compared for {report.needs_judge} simulations: NL assertions need --judge")
    if report.mean_reward is not None:
        recorded = (
            "" if report.recorded_mean_reward is None else f" (recorded {report.recorded_mean_reward:.3f})"
        )
        out.print(f"mean reward {report.mean_reward:.3f}{recorded}")
    out.print(f"see it: assay show {escape(report.run_id)} · assay view")
