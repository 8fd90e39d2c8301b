"""``assay run``, ``validate``, ``runs``, ``show``: running suites and reading runs."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..core.results import RunInfo, TrialResult
from ..errors import AssayError, SuiteError
from ..llm.cassette import Cassette
from ..report.console import render_runs, render_summary, render_transcript, render_trials
from ..runner.api import Run, pick_trial, run_async
from ..runner.ray_executor import make_executor
from ..store.store import Store
from ..suites.loader import load_suite
from .app import JsonOpt, StoreOpt, app, err, out, parse_params, print_json


@app.command()
def run(
    suite: Annotated[
        str | None, typer.Argument(help="Suite folder, suite.yaml, or built-in name (retail).")
    ] = None,
    agent: Annotated[
        str, typer.Option("--agent", "-a", help="Agent spec: builtin:NAME, python:module:factory, ...")
    ] = "builtin:retail-careful",
    trials: Annotated[
        int | None, typer.Option("--trials", "-k", min=1, help="Trials per task (default: the suite's).")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", min=1, help="Trials running at once.")
    ] = 8,
    executor: Annotated[
        str, typer.Option("--executor", help="Where trials run: local (asyncio) or ray (docs/scale.md).")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="Ray cluster: auto or ray://HOST:PORT (default: start one)."),
    ] = None,
    faults: Annotated[
        str | None,
        typer.Option("--faults", help="Tool faults: plan file or TOOL:KIND@RATE,... (docs/robustness.md)."),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Run seed: templated tasks and trial seeds derive from it.")
    ] = 0,
    user: Annotated[str, typer.Option("--user", help="User simulator spec (scripted, ...).")] = "scripted",
    split: Annotated[
        str | None,
        typer.Option("--split", help="Only tasks of this split (regression, capability, holdout)."),
    ] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Only tasks with this capability tag (repeatable).")
    ] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task id (repeatable).")] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="Config parameter KEY=VALUE (JSON value), e.g. temperature=0."),
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(
            "--model-option",
            "-m",
            help="Model client setting KEY=VALUE: base_url, max_retries, rpm, tpm, max_concurrency, ...",
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option("--judge", help="LLM judge model spec (repeat for a panel), e.g. openai:gpt-4o."),
    ] = None,
    judge_option: Annotated[
        list[str] | None,
        typer.Option("--judge-option", help="Judge client setting KEY=VALUE (base_url, pricing, cache...)."),
    ] = None,
    cache: Annotated[
        bool, typer.Option("--cache", help="Cache agent and user model responses on disk.")
    ] = False,
    pricing: Annotated[
        str | None, typer.Option("--pricing", help="Pricing YAML file (USD per million tokens).")
    ] = None,
    record: Annotated[
        str | None, typer.Option("--record", help="Record every model exchange to this cassette file.")
    ] = None,
    replay: Annotated[
        str | None, typer.Option("--replay", help="Replay model exchanges from this cassette file.")
    ] = None,
    max_cost_usd: Annotated[
        float | None, typer.Option("--max-cost-usd", help="Per-trial cost budget.")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Per-trial token budget.")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name the run (default: generated).")] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Resume this run: only its missing trials run.")
    ] = None,
    until_decided: Annotated[
        bool,
        typer.Option(
            "--until-decided",
            help="Run in rounds and stop when a sequential test decides (with --against or --threshold).",
        ),
    ] = False,
    against: Annotated[
        str | None, typer.Option("--against", help="With --until-decided: the baseline run to beat.")
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="With --until-decided: is the success rate above this?"),
    ] = None,
    mde: Annotated[
        float, typer.Option("--mde", help="With --until-decided: smallest difference worth detecting.")
    ] = 0.05,
    max_trials: Annotated[
        int | None, typer.Option("--max-trials", min=1, help="With --until-decided: budget of trials.")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a suite: every task k times, graded, stored.

    Example: assay run retail --agent builtin:retail-hasty -k 4 --json
    """
    if until_decided:
        from .decide import run_adaptive

        if (against is None) == (threshold is None):
            raise AssayError("--until-decided needs exactly one of --against RUN_ID or --threshold RATE")
        run_adaptive(
            suite,
            agent,
            against=against,
            threshold=threshold,
            mde=mde,
            max_trials=max_trials,
            trials=trials,
            seed=seed if seed else None,
            concurrency=concurrency,
            user=user if user != "scripted" else None,
            split=split,
            tag=tag,
            task=task,
            run_id=run_id,
            store=store,
            as_json=as_json,
            discordance=None,
            alpha=0.05,
            power=0.8,
            method="sprt",
            round_size=None,
            markdown=None,
        )
        return
    if suite is None and resume is None:
        raise AssayError("give a SUITE to run, or --resume RUN_ID")
    if record and replay:
        raise AssayError("--record and --replay exclude each other")
    model_options: dict[str, Any] = parse_params(model_option or [])
    if cache:
        model_options["cache"] = True
    if pricing:
        model_options["pricing"] = pricing
    limits = {
        k: v for k, v in {"max_cost_usd": max_cost_usd, "max_tokens": max_tokens}.items() if v is not None
    }
    cassette = Cassette(record, "record") if record else Cassette(replay, "replay") if replay else None
    runner = make_executor(executor, concurrency, ray_address)
    st = Store(store)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"),
        console=err,
        disable=not err.is_terminal,
    )
    bar: dict[str, Any] = {}
    rewards: Counter[str] = Counter()

    def on_start(info: RunInfo) -> None:
        bar["id"] = progress.add_task(info.run_id, total=info.planned_trials, status="")
        if not as_json:
            err.print(f"run [bold]{info.run_id}[/] · {info.planned_trials} trials · store {st.url}")

    def on_result(result: TrialResult, done: int, total: int) -> None:
        rewards["pass" if result.reward == 1 else "fail" if result.reward == 0 else "excluded"] += 1
        status = " ".join(f"{k} {v}" for k, v in sorted(rewards.items()))
        progress.update(bar["id"], completed=done, status=status)

    started: dict[str, RunInfo] = {}

    def remember(info: RunInfo) -> None:
        started["info"] = info
        on_start(info)

    try:
        with progress:
            result = asyncio.run(
                run_async(
                    suite if suite is not None else "",
                    agent,
                    trials,
                    concurrency,
                    seed,
                    st,
                    user=user,
                    split=split,
                    tags=tag or (),
                    task_ids=task or (),
                    params=parse_params(param or []),
                    model_options=model_options,
                    cassette=cassette,
                    limits=limits,
                    judges=judge or (),
                    judge_options=parse_params(judge_option or []),
                    faults=faults,
                    executor=runner,
                    run_id=run_id,
                    resume=resume,
                    progress=on_result,
                    on_start=remember,
                )
            )
    except KeyboardInterrupt:
        rid = started["info"].run_id if "info" in started else None
        err.print(f"[yellow]interrupted[/]; resume with: assay run --resume {rid}" if rid else "interrupted")
        raise typer.Exit(130) from None
    finally:
        getattr(runner, "close", lambda: None)()  # a Ray started for this run stops with it
    summary = result.summary()
    if as_json:
        print_json(summary)
    else:
        render_summary(summary, out)
    if summary["excluded"]["by_termination"].get("harness_error"):
        err.print("[red]some trials ended in harness errors (not counted against the agent); exit code 3[/]")
        raise typer.Exit(3)


@app.command()
def validate(
    path: Annotated[str, typer.Argument(help="Suite folder, suite.yaml, or built-in name.")],
    as_json: JsonOpt = False,
) -> None:
    """Check a suite: every problem printed as file:line: field: message; exit 2 on any.

    Example: assay validate suites/my-suite
    """
    try:
        suite = load_suite(path)
    except SuiteError as exc:
        if as_json:
            print_json({"ok": False, "problems": [p.__dict__ for p in exc.problems]})
        else:
            for problem in exc.problems:
                print(problem)
            err.print(f"[red]{len(exc.problems)} problem(s)[/]")
        raise typer.Exit(2) from None
    from ..suites.instantiate import iter_instances

    strata = Counter(t.stratum for t in iter_instances(suite, 0))
    count = sum(strata.values())
    if as_json:
        print_json(
            {
                "ok": True,
                "suite": suite.name,
                "version": suite.version,
                "hash": suite.hash,
                "tasks": count,
                "strata": dict(strata),
                "canary": suite.canary,
            }
        )
        return
    out.print(
        f"ok: suite {suite.name} v{suite.version} (hash {suite.hash}): {count} tasks · "
        + ", ".join(f"{k} {v}" for k, v in sorted(strata.items()))
    )
    if not suite.canary:
        err.print(
            "[yellow]warning: no canary GUID; add `canary:` so leaked copies of the suite can be detected[/]"
        )


@app.command()
def runs(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the runs in the store, newest first.

    Example: assay runs --json
    """
    rows = Store(store).list_runs()
    if as_json:
        print_json(rows)
    else:
        render_runs(rows, out)


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (see `assay runs`).")],
    task: Annotated[
        str | None, typer.Option("--task", help="Show this task's trials and a transcript.")
    ] = None,
    trial: Annotated[
        int | None, typer.Option("--trial", help="Which trial's transcript (default: first failure).")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a run: summary and per-task table, or one task's trials and transcript.

    Example: assay show retail-20260101-120000-abc123 --task refund-15-days-1
    """
    st = Store(store)
    if task is None:
        summary = Run.load(run_id, st).summary()
        if as_json:
            print_json(summary)
        else:
            render_summary(summary, out)
        return
    st.get_run(run_id)
    results = st.load_results(run_id, task)
    chosen = pick_trial(results, run_id, task, trial)
    transcript = st.load_transcript(run_id, task, chosen.trial_index)
    if as_json:
        from pydantic import TypeAdapter

        print_json(
            {
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
