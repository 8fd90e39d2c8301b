"""``assay run``, ``validate``, ``runs``, ``show``: running suites and reading runs. How
``assay run`` executes a run (progress, interrupts, resume, adaptive rounds) is in
:mod:`.run_execution`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..core.results import TrialResult
from ..errors import AssayError, SuiteError
from ..report.console import render_runs, render_summary, render_transcript, render_trials
from ..runner.stored import Run, pick_trial
from ..store.store import Store
from ..suites.loader import load_suite
from .app import JsonOpt, StoreOpt, app, err, out, print_json
from .looks import looked_at
from .redact_options import RedactConfigOpt, RedactOpt, redactor_on_request
from .run_execution import _adaptive, _resume, _run
from .run_options import build_spec, with_run_options

_DECIDE = "Adaptive trials (with --until-decided)"


@app.command()
@with_run_options
def run(
    suite: Annotated[
        str | None, typer.Argument(help="Suite folder, suite.yaml, or built-in name (retail).")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Resume this run (its missing and harness-error trials)."),
    ] = None,
    retry_errors: Annotated[
        str | None,
        typer.Option("--retry-errors", help="Run again the harness-error trials of this run."),
    ] = None,
    until_decided: Annotated[
        bool,
        typer.Option(
            "--until-decided",
            help="Run in rounds and stop when a sequential test decides (with --against or --threshold).",
            rich_help_panel=_DECIDE,
        ),
    ] = False,
    against: Annotated[
        str | None,
        typer.Option("--against", help="The baseline run to beat (paired test).", rich_help_panel=_DECIDE),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="Rate test: is success above this?", rich_help_panel=_DECIDE),
    ] = None,
    mde: Annotated[
        float | None,
        typer.Option("--mde", help="Smallest difference worth detecting (0.05).", rich_help_panel=_DECIDE),
    ] = None,
    alpha: Annotated[
        float | None,
        typer.Option("--alpha", help="Type-I error rate (default 0.05).", rich_help_panel=_DECIDE),
    ] = None,
    power: Annotated[
        float | None, typer.Option("--power", help="Power at the MDE (default 0.8).", rich_help_panel=_DECIDE)
    ] = None,
    method: Annotated[
        str | None,
        typer.Option("--method", help="sprt (default) or msprt (paired).", rich_help_panel=_DECIDE),
    ] = None,
    discordance: Annotated[
        float | None,
        typer.Option(
            "--discordance",
            help="Paired: design for this share of disagreeing pairs (default: the share the data show).",
            rich_help_panel=_DECIDE,
        ),
    ] = None,
    max_trials: Annotated[
        int | None, typer.Option("--max-trials", help="Budget of trials.", rich_help_panel=_DECIDE)
    ] = None,
    round_size: Annotated[
        int | None,
        typer.Option(
            "--round-size",
            help="Most trials run past the decision (default: -j, at most 5% of the fixed design).",
            rich_help_panel=_DECIDE,
        ),
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option("--markdown", help="With --until-decided: also write the summary as Markdown."),
    ] = None,
    as_json: JsonOpt = False,
    *,
    options: dict[str, Any],
) -> None:
    """Run a suite: every task k times, graded, stored.

    Example: assay run retail --agent builtin:retail-hasty -k 4 --json
    """
    decide = {
        k: v
        for k, v in dict(
            against=against,
            threshold=threshold,
            mde=mde,
            alpha=alpha,
            power=power,
            method=method,
            discordance=discordance,
            max_trials=max_trials,
            round_size=round_size,
        ).items()
        if v is not None
    }
    if decide and not until_decided:
        raise AssayError(f"--{next(iter(decide)).replace('_', '-')} needs --until-decided")
    if markdown is not None and not until_decided:
        raise AssayError("--markdown needs --until-decided (see also assay compare/gate --markdown)")
    target = resume or retry_errors
    if target is not None:
        if suite is not None or until_decided or (resume and retry_errors):
            raise AssayError(
                "--resume/--retry-errors take a run id alone: the run keeps its own suite and spec"
            )
        _resume(target, bool(retry_errors), options, as_json)
        return
    if until_decided:
        spec = build_spec(suite or _baseline_suite(against, options), options, decide=decide)
        _adaptive(spec, markdown, as_json)
        return
    _run(build_spec(suite, options), as_json)


def _baseline_suite(against: str | None, options: dict[str, Any]) -> str | None:
    """With --against and no SUITE: the baseline run's suite."""
    if against is None:
        return None
    return Store(options.get("store")).get_run(against).suite_source


@app.command()
def validate(
    path: Annotated[str, typer.Argument(help="Suite folder, suite.yaml, or built-in name.")],
    as_json: JsonOpt = False,
) -> None:
    """Check a suite: every problem printed as file:line: field: message; exit 2 on any.

    Example: assay validate suites/my-suite
    """
    from ..suites.instantiate import iter_instances

    try:
        suite = load_suite(path)
        _check_defaults(suite, path)
        strata = Counter(t.stratum for t in iter_instances(suite, 0))
    except SuiteError as exc:
        if as_json:
            print_json(
                {"schema": "assay.validate/1", "ok": False, "problems": [p.__dict__ for p in exc.problems]}
            )
        else:
            for problem in exc.problems:
                print(problem)
            err.print(f"[red]{len(exc.problems)} problem(s)[/]")
        raise typer.Exit(2) from None
    count = sum(strata.values())
    if as_json:
        print_json(
            {
                "schema": "assay.validate/1",
                "ok": True,
                "suite": suite.name,
                "version": suite.version,
                "hash": suite.hash,
                "tasks": count,
                "strata": dict(strata),
                "canary": suite.canary,
                "imports": suite.imported_modules,
            }
        )
        return
    out.print(
        escape(
            f"ok: suite {suite.name} v{suite.version} (hash {suite.hash}): {count} tasks · "
            + ", ".join(f"{k} {v}" for k, v in sorted(strata.items()))
        ),
        highlight=False,
    )
    if suite.imported_modules:
        out.print(
            escape("imports (loading the suite runs this code): " + ", ".join(suite.imported_modules)),
            highlight=False,
        )
    if not suite.canary:
        err.print(
            "[yellow]warning: no canary GUID; add `canary:` so leaked copies of the suite can be detected[/]"
        )


def _check_defaults(suite: Any, source: str) -> None:
    """The suite's default agent and user must be specs a run can resolve (what
    ``assay run`` checks before anything else)."""
    from ..agents.specs import agent_factory
    from ..errors import Problem
    from ..suites.loader import resolve_source
    from ..users.specs import user_factory

    problems = []
    for name, spec, resolve in (
        ("defaults.agent", suite.defaults.agent, agent_factory),
        ("defaults.user", suite.defaults.user, user_factory),
    ):
        if spec is None:
            continue
        try:
            resolve(spec)
        except AssayError as exc:
            problems.append(Problem(str(resolve_source(source)), None, name, str(exc)))
    if problems:
        raise SuiteError(problems)


@app.command()
def runs(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the runs in the store, newest first.

    Example: assay runs --json
    """
    rows = Store(store).list_runs()
    if as_json:
        print_json({"schema": "assay.runs/1", "runs": rows})
    else:
        render_runs(rows, out)


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (see `assay runs`), or latest, latest~1...")],
    task: Annotated[
        str | None, typer.Option("--task", help="Show this task's trials and a transcript.")
    ] = None,
    trial: Annotated[
        int | None, typer.Option("--trial", help="Which trial's transcript (default: first failure).")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    redact: RedactOpt = False,
    redact_config: RedactConfigOpt = None,
) -> None:
    """Show a run: summary and per-task table, or one task's trials and transcript.

    --redact replaces secrets and personal data in the trials shown (with --task), for a
    terminal or a log that others will see.

    Example: assay show retail-20260101-120000-abc123 --task refund-15-days-1
    """
    redactor = redactor_on_request(redact, redact_config)
    st = Store(store)
    loaded = Run.load(run_id, st)
    if task is None or any(t.task_id == task and t.split == "holdout" for t in loaded.tasks):
        looked_at(st, [loaded], "show")  # the run's holdout tasks, or the holdout task asked for
    if task is None:
        summary = loaded.summary()
        if as_json:
            print_json(summary.to_dict())
        else:
            render_summary(summary, out)
        return
    run_id = loaded.run_id  # latest, latest~1... resolved
    results = st.load_results(run_id, task)
    chosen = pick_trial(results, run_id, task, trial)
    transcript = st.load_transcript(run_id, task, chosen.trial_index)
    if redactor is not None:  # each trial with its own pseudonyms, as in reports and exports
        from ..redact.trial import redact_trial

        results = [redact_trial(r, None, redactor).result for r in results]
        shown = redact_trial(chosen, transcript, redactor)
        chosen, transcript = shown.result, shown.transcript
    if as_json:
        from pydantic import TypeAdapter

        print_json(
            {
                "schema": "assay.task-trials/1",
                "trials": TypeAdapter(list[TrialResult]).dump_python(results, mode="json"),
                "transcript": TypeAdapter(type(transcript)).dump_python(transcript, mode="json")
                if transcript
                else None,
                "trial_index": chosen.trial_index,
            }
        )
        return
    render_trials(results, out)
    render_transcript(chosen, transcript, out)
