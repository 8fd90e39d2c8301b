"""How ``assay run`` executes a run: a new one, a resumed one (``--resume``,
``--retry-errors``) or an adaptive one (``--until-decided``), with a progress bar on
stderr; Ctrl-C and SIGTERM mark the run interrupted."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..core.results import RunInfo, TrialResult
from ..core.spec import RunSpec
from ..errors import AssayError
from ..report.console import render_summary
from ..runner.stored import Run
from ..store.store import Store
from .app import err, out, print_json, terminate_as_interrupt
from .run_options import given, spec_fields


class _Progress:
    """A progress bar on stderr (when it is a terminal) with pass/fail counts."""

    def __init__(self, store: Store, as_json: bool):
        self.store, self.as_json = store, as_json
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[status]}"),
            console=err,
            disable=not err.is_terminal,
        )
        self.task: Any = None
        self.counts: Counter[str] = Counter()
        self.info: RunInfo | None = None

    def start(self, info: RunInfo) -> None:
        self.info = info
        self.task = self.bar.add_task(escape(info.run_id), total=info.planned_trials, status="")
        if not self.as_json:
            err.print(
                f"run [bold]{escape(info.run_id)}[/] · {info.planned_trials} trials · store {self.store.url}"
            )

    def result(self, result: TrialResult, done: int, total: int) -> None:
        if self.task is None:  # a run started without on_start (adaptive rounds)
            self.task = self.bar.add_task(escape(result.run_id), total=total, status="")
        self.counts["pass" if result.reward == 1 else "fail" if result.reward == 0 else "excluded"] += 1
        status = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        self.bar.update(self.task, completed=done, status=status)


def _executing(store: Store, as_json: bool, start: Callable[[_Progress], Any]) -> Any:
    """Run ``start(progress)`` (a coroutine) with a progress bar; Ctrl-C and SIGTERM
    mark the run interrupted and say how to resume it."""
    progress = _Progress(store, as_json)
    try:
        with progress.bar, terminate_as_interrupt():
            return asyncio.run(start(progress))
    except KeyboardInterrupt:
        rid = progress.info.run_id if progress.info else None
        err.print(
            f"[yellow]interrupted[/]; resume with: assay run --resume {escape(rid)}" if rid else "interrupted"
        )
        raise typer.Exit(130) from None


def _finish(run: Run, as_json: bool) -> None:
    summary = run.summary()
    if as_json:
        print_json(summary.to_dict())
    else:
        render_summary(summary, out)
    if summary.excluded.by_termination.get("harness_error"):
        err.print("[red]some trials ended in harness errors (not counted against the agent); exit code 3[/]")
        raise typer.Exit(3)


def _run(spec: RunSpec, as_json: bool) -> None:
    if spec.flag_matrix:  # an experiment: one run per arm (docs/lifecycle.md)
        from .experiment import run_matrix

        run_matrix(spec, as_json)
        return
    if spec.split == "holdout":
        err.print("[yellow]warning:[/] running the holdout split: this look is logged (assay suite status)")
    from ..runner.api import run_async  # not imported by the commands that read runs

    store = Store(spec.store)

    def start(p: _Progress) -> Any:
        return run_async(spec, store=store, progress=p.result, on_start=p.start)

    run = _executing(store, as_json, start)
    if spec.probe and not as_json:
        from ..lifecycle.tracks import track_report
        from ..store.evidence import load_checks

        e = track_report(load_checks(store, run.run_id), [], track="probe", run_id=run.run_id)["evidence"]
        err.print(
            f"probe track: {e['checked']} evidence record(s): {e['current']} current, {e['stale']} stale, "
            f"{e['probe_errors']} probe error(s), not counted against the agent (assay evidence {run.run_id})"
        )
    _finish(run, as_json)


def _resume(run_id: str, retry: bool, options: dict[str, Any], as_json: bool) -> None:
    allowed = {
        "store",
        "concurrency",
        "executor",
        "ray_address",
        "model_option",
        "judge_option",
        "check_models",
        "breaker",
    }
    extra = [flag for flag in given({k: v for k, v in options.items() if k not in allowed})]
    if extra:
        raise AssayError(f"{extra[0]} cannot be given with --resume: a resumed run keeps its own spec")
    from ..runner.api import resume_async
    from ..runner.ray_executor import make_executor

    store = Store(options.get("store"))
    info = store.get_run(run_id)
    secrets = spec_fields({k: options.get(k) for k in ("model_option", "judge_option")})
    executor = make_executor(
        options.get("executor") or info.spec.executor,
        options.get("concurrency") or info.spec.concurrency,
        options.get("ray_address") or (info.spec.ray_address if not options.get("executor") else None),
    )

    def start(p: _Progress) -> Any:
        return resume_async(
            run_id,
            store=store,
            retry_errors=retry,
            secrets=secrets,
            executor=executor,
            progress=p.result,
            on_start=p.start,
            check_models=options.get("check_models"),
            breaker=options.get("breaker"),
        )

    if info.status == "finished" and not retry and not as_json:
        errored = store.count_retryable(run_id)
        hint = (
            f"; `--retry-errors {run_id}` runs its {errored} harness-error trial(s) again" if errored else ""
        )
        err.print(f"run {escape(run_id)} is finished: nothing to resume{escape(hint)}")
    try:
        _finish(_executing(store, as_json, start), as_json)
    finally:
        getattr(executor, "close", lambda: None)()


def _adaptive(spec: RunSpec, markdown: Path | None, as_json: bool) -> None:
    from ..compare.adaptive import RoundReport, run_until_decided_async

    if spec.flag_matrix:
        raise AssayError(
            "crossed flags (--flag NAME=A/B, --flag-matrix) run an experiment with plain assay run, "
            "not --until-decided"
        )
    from ..core.outputs import refuse_store_path
    from ..report.markdown import adaptive_markdown
    from .decide import show_markdown, write_text

    def on_round(report: RoundReport) -> None:  # the first round, every tenth, and the last
        s = report.state
        if report.round == 1 or report.round % 10 == 0 or s.decision != "continue":
            err.print(
                f"round {report.round}: {report.trials} trials read · {s.steps} test steps · {s.decision}"
            )

    store = Store(spec.store)
    refuse_store_path(markdown, store.path, "--markdown")  # before any trial runs

    def start(p: _Progress) -> Any:
        return run_until_decided_async(spec, store=store, progress=p.result, on_round=on_round)

    result = _executing(store, as_json, start)
    text = adaptive_markdown(result)
    if markdown is not None:
        write_text(markdown, text, "adaptive summary")
    if as_json:
        print_json(result.to_dict())
    else:
        show_markdown(text)
