"""``assay compare``, ``gate``, ``plan``: turning runs into decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer
from rich.markdown import Markdown
from rich.markup import escape

from ..compare import MatchBy, TaskOutcome, compare_runs
from ..compare.planning import plan as make_plan
from ..compare.planning import task_icc
from ..core.outputs import atomic_output, refuse_store_path
from ..errors import AssayError
from ..gate import evaluate, load_policy
from ..report.junit import junit_xml
from ..report.markdown import compare_markdown, gate_markdown, plan_markdown
from ..runner.plan import select_tasks
from ..runner.stored import Run
from ..store.store import Store
from ..suites.instantiate import instantiate
from ..suites.loader import load_suite
from .app import JsonOpt, StoreOpt, app, err, out, print_json
from .looks import looked_at

MarkdownOpt = Annotated[
    Path | None, typer.Option("--markdown", help="Also write the summary as Markdown (for a PR comment).")
]


def write_text(path: Path, text: str, what: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (an earlier file stays as it was
    until then); a file that cannot be written is one line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(path) as fh:
            fh.write(text)
    except OSError as exc:
        raise AssayError(f"cannot write the {what} to {path}: {exc.strerror or exc}") from None
    err.print(escape(f"{what} written to {path}"))


def show_markdown(markdown: str) -> None:
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
    refuse_store_path(markdown, st.path, "--markdown")
    loaded = [Run.load(run_id, st) for run_id in runs]
    looked_at(st, loaded, "compare")
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
        write_text(markdown, text, "comparison")
    if as_json:
        print_json(result.to_dict())
    else:
        show_markdown(text)


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
    refuse_store_path(junit, st.path, "--junit")
    refuse_store_path(markdown, st.path, "--markdown")
    run = Run.load(run_id, st)
    base = Run.load(baseline, st) if baseline else None
    looked_at(st, [run, *([base] if base else [])], "gate")
    verdict = evaluate(run, rules, base)
    text = gate_markdown(verdict)
    if junit is not None:
        write_text(junit, junit_xml(run, verdict), "JUnit XML")
    if markdown is not None:
        write_text(markdown, text, "gate summary")
    if as_json:
        print_json(verdict.to_dict())
    else:
        show_markdown(text)
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
    margin: Annotated[
        float | None,
        typer.Option(
            "--margin",
            help="Plan a non-inferiority test (guardrail, rollout): not worse by this much "
            "(--mde: the difference expected, default 0; --alpha one-sided).",
        ),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """How many tasks × trials a decision needs, and what a suite can detect.

    Example: assay plan --baseline 0.7 --mde 0.03 --suite retail -k 4
    Non-inferiority (a guardrail): assay plan --baseline 0.9 --margin 0.05 --paired
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
    if split is not None and suite is None:
        raise AssayError("--split chooses tasks of --suite: give --suite too")
    if suite is not None:
        loaded = load_suite(suite)
        n_tasks = len(select_tasks(instantiate(loaded, 0), split=split))
        if not n_tasks:  # as assay run refuses it: never a plan without the suite's line
            raise AssayError(
                f"--split {split}: no task of suite {loaded.name} is in this split "
                "(splits: regression, capability, holdout; all: every split)"
            )
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
        margin=margin,
    )
    if as_json:
        print_json(result.to_dict())
    else:
        show_markdown(plan_markdown(result))
