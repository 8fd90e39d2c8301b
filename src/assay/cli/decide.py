"""``assay compare``, ``gate``, ``plan``, ``run-adaptive``: turning runs into decisions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.markdown import Markdown

from ..compare import MatchBy, TaskOutcome, compare_runs
from ..compare.adaptive import Method, RoundReport, run_until_decided_async
from ..compare.planning import plan as make_plan
from ..compare.planning import task_icc
from ..errors import AssayError
from ..gate import evaluate, load_policy
from ..report.junit import write_junit
from ..report.markdown import adaptive_markdown, compare_markdown, gate_markdown, plan_markdown
from ..runner.api import Run
from ..runner.plan import select_tasks
from ..store.store import Store
from ..suites.instantiate import instantiate
from ..suites.loader import load_suite
from .app import JsonOpt, StoreOpt, app, err, out, print_json

MarkdownOpt = Annotated[
    Path | None, typer.Option("--markdown", help="Also write the summary as Markdown (for a PR comment).")
]


def _write(path: Path, text: str, what: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AssayError(f"cannot write the {what} to {path}: {exc.strerror or exc}") from None
    err.print(f"{what} written to {path}")


def _show(markdown: str) -> None:
    out.print(Markdown(markdown))


@app.command()
def compare(
    runs: Annotated[list[str], typer.Argument(help="Baseline run id, then one or more candidate run ids.")],
    profile: Annotated[
        Path | None, typer.Option("--profile", help="Box scoring profile (YAML); default: the shipped one.")
    ] = None,
    common_only: Annotated[
        bool, typer.Option("--common-only", help="Allow different suite versions: compare on common tasks.")
    ] = False,
    adjust: Annotated[
        str, typer.Option("--adjust", help="Multiplicity adjustment: holm, bonferroni or bh.")
    ] = "holm",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level (two-sided).")] = 0.05,
    match: Annotated[
        str, typer.Option("--match", help="Pair by task (default) or by trial (task id + trial index).")
    ] = "task",
    task_outcome: Annotated[
        str,
        typer.Option(
            "--task-outcome", help="A task passes when all (default: pass^k), majority or any trials pass."
        ),
    ] = "all",
    markdown: MarkdownOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare runs paired on the same tasks: is B better than A, by how much, is it real.

    Example: assay compare RUN_CAREFUL RUN_HASTY --profile examples/box.yaml
    """
    if match not in ("task", "trial"):
        raise AssayError(f"--match must be 'task' or 'trial', not {match!r}")
    if task_outcome not in ("majority", "all", "any"):
        raise AssayError(f"--task-outcome must be 'majority', 'all' or 'any', not {task_outcome!r}")
    st = Store(store)
    loaded = [Run.load(run_id, st) for run_id in runs]
    result = compare_runs(
        loaded,
        profile=profile,
        common_only=common_only,
        adjust=adjust,
        alpha=alpha,
        match=cast(MatchBy, match),
        task_outcome=cast(TaskOutcome, task_outcome),
    )
    text = compare_markdown(result)
    if markdown is not None:
        _write(markdown, text, "comparison")
    if as_json:
        print_json(result.to_dict())
    else:
        _show(text)


@app.command()
def gate(
    run_id: Annotated[str, typer.Argument(help="The run to gate.")],
    policy: Annotated[Path, typer.Option("--policy", help="Gate policy YAML (see examples/gate.yaml).")],
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="Baseline run id for the relative checks.")
    ] = None,
    junit: Annotated[
        Path | None, typer.Option("--junit", help="Write JUnit XML (one testcase per task).")
    ] = None,
    markdown: MarkdownOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Gate a run on a policy: exit 0 pass, 1 fail, 2 bad policy or input.

    Example: assay gate RUN_ID --policy examples/gate.yaml --junit junit.xml --markdown gate.md
    """
    rules = load_policy(policy)
    st = Store(store)
    run = Run.load(run_id, st)
    base = Run.load(baseline, st) if baseline else None
    verdict = evaluate(run, rules, base)
    text = gate_markdown(verdict)
    if junit is not None:
        try:
            write_junit(junit, run, verdict)
        except OSError as exc:
            raise AssayError(f"cannot write the JUnit XML to {junit}: {exc.strerror or exc}") from None
        err.print(f"JUnit XML written to {junit}")
    if markdown is not None:
        _write(markdown, text, "gate summary")
    if as_json:
        print_json(verdict.to_dict())
    else:
        _show(text)
    raise typer.Exit(verdict.exit_code)


@app.command()
def plan(
    baseline: Annotated[
        float | None, typer.Option("--baseline", help="Baseline success rate, e.g. 0.7.")
    ] = None,
    mde: Annotated[
        float | None,
        typer.Option("--mde", help="Difference to detect (rate units, e.g. 0.03; negative = a drop)."),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided significance level.")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Chance of detecting the difference.")] = 0.8,
    paired: Annotated[
        bool, typer.Option("--paired", help="Both configurations on the same tasks (McNemar).")
    ] = False,
    discordance: Annotated[
        float | None,
        typer.Option("--discordance", help="Paired: expected share of tasks the two disagree on."),
    ] = None,
    suite: Annotated[
        str | None, typer.Option("--suite", help="Also say what this suite (tasks × k) can detect.")
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help="Only this split of --suite.")] = None,
    tasks: Annotated[int | None, typer.Option("--tasks", min=1, help="A suite of this many tasks.")] = None,
    k: Annotated[int | None, typer.Option("-k", "--trials", min=1, help="Trials per task.")] = None,
    icc: Annotated[
        float | None, typer.Option("--icc", help="Intra-task correlation of trials (default 0.5).")
    ] = None,
    from_run: Annotated[
        str | None, typer.Option("--from-run", help="Take baseline rate, tasks, k and ICC from this run.")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """How many tasks × trials a decision needs, and what a suite can detect.

    Example: assay plan --baseline 0.7 --mde 0.03 --suite retail -k 4
    """
    n_tasks = tasks
    if from_run is not None:
        run = Run.load(from_run, Store(store))
        counted = [r.reward for r in run.results if r.reward is not None]
        if not counted:
            raise AssayError(f"run {from_run} has no counted trial to plan from")
        baseline = sum(counted) / len(counted) if baseline is None else baseline
        n_tasks = n_tasks or len(run.info.task_ids)
        k = k or run.info.trials_per_task
        icc = task_icc(run.results) if icc is None else icc
    if suite is not None:
        loaded = load_suite(suite)
        n_tasks = len(select_tasks(instantiate(loaded, 0), split=split))
        k = k or loaded.defaults.trials
    if baseline is None:
        raise AssayError("give --baseline RATE (e.g. 0.7), or --from-run RUN_ID to take it from a run")
    result = make_plan(
        baseline,
        mde,
        alpha=alpha,
        power=power,
        paired=paired,
        k=k or 1,
        icc=0.5 if icc is None else icc,
        discordance=discordance,
        suite_tasks=n_tasks,
    )
    if as_json:
        print_json(result.to_dict())
    else:
        _show(plan_markdown(result))


@app.command("run-adaptive")
def run_adaptive(
    suite: Annotated[
        str | None, typer.Argument(help="Suite (default with --against: the baseline's suite).")
    ] = None,
    agent: Annotated[
        str, typer.Option("--agent", "-a", help="Agent spec of the candidate.")
    ] = "builtin:retail-careful",
    against: Annotated[
        str | None, typer.Option("--against", help="Baseline run id: paired test of a difference.")
    ] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Rate test: is the success rate above this?")
    ] = None,
    mde: Annotated[float, typer.Option("--mde", help="Smallest difference worth detecting.")] = 0.05,
    discordance: Annotated[
        float | None,
        typer.Option("--discordance", help="Paired: expected share of disagreeing pairs (3×mde)."),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Type-I error rate (exact).")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Power at the MDE (exact).")] = 0.8,
    method: Annotated[
        str,
        typer.Option("--method", help="sprt (calibrated, fewest trials) or msprt (always valid; paired)."),
    ] = "sprt",
    max_trials: Annotated[
        int | None, typer.Option("--max-trials", min=1, help="Budget of trials (default: the full design).")
    ] = None,
    trials: Annotated[
        int | None, typer.Option("--trials", "-k", min=1, help="Trials per task planned.")
    ] = None,
    round_size: Annotated[
        int | None, typer.Option("--round-size", min=1, help="Trials per round (default: one per task).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Run seed (paired default: the baseline's).")
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", min=1, help="Trials at once.")] = 8,
    user: Annotated[
        str | None, typer.Option("--user", help="User simulator (paired default: the baseline's).")
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help="Rate test: only tasks of this split.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Rate test: only tasks with this tag.")
    ] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task id (repeatable).")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name the run.")] = None,
    markdown: MarkdownOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run trials in rounds until a sequential test decides, or the budget is spent.

    Example: assay run-adaptive retail --agent builtin:retail-flaky --against RUN_CAREFUL
    """

    def on_round(report: RoundReport) -> None:
        s = report.state
        err.print(f"round {report.round}: {report.trials} trials · {s.steps} test steps · {s.decision}")

    result = asyncio.run(
        run_until_decided_async(
            suite,
            agent,
            against=against,
            threshold=threshold,
            mde=mde,
            discordance=discordance,
            alpha=alpha,
            power=power,
            method=cast(Method, method),
            max_trials=max_trials,
            trials=trials,
            round_size=round_size,
            seed=seed,
            store=Store(store),
            concurrency=concurrency,
            user=user,
            split=split,
            tags=tag or (),
            task_ids=task or (),
            run_id=run_id,
            on_round=on_round,
        )
    )
    text = adaptive_markdown(result)
    if markdown is not None:
        _write(markdown, text, "adaptive summary")
    if as_json:
        print_json(result.to_dict())
    else:
        _show(text)
