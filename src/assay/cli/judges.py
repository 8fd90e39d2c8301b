"""``assay label``, ``assay calibrate`` and ``assay judge-pairwise``: human labels, judge
calibration against them, and position-swapped pairwise judging of two runs."""

from __future__ import annotations

import asyncio
import getpass
import math
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.prompt import Prompt
from rich.table import Table

from ..compare.judging import calibrate, judge_runs
from ..core.problem import Problem
from ..core.results import TrialResult
from ..core.sources import text_problem
from ..core.terminal import printable, shown
from ..errors import AssayError
from ..graders.calibration import TRIAL, GraderCalibration, needs_review
from ..graders.files import GraderFileError
from ..graders.judge import label_dimensions
from ..graders.judge_prompt import render_transcript
from ..graders.pairwise import write_battles
from ..graders.registry import is_judge_kind
from ..graders.rubric import load_rubric
from ..llm.spec import shared_model
from ..llm.types import GenerateConfig
from ..store.labels import (
    MAX_LABELLER,
    Label,
    LabelError,
    LabelStore,
    LocatedLabel,
    read_located,
    write_jsonl,
)
from ..store.store import Store
from .app import JsonOpt, StoreOpt, app, err, out, parse_params, print_json


def _default_labeller() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "human"


def _dimensions(result: TrialResult, grader: str) -> list[tuple[str, list[str]]]:
    """(dimension, allowed values) of a grader's grade of this trial."""
    g = next((g for g in result.grades if g.grader == grader), None)
    return [] if g is None else label_dimensions(g)


def _show_trial(st: Store, run_id: str, r: TrialResult) -> None:
    out.rule(f"[bold]{_cell(r.task_id)}[/] · trial {r.trial_index} · ended by {_cell(r.termination)}")
    transcript = st.load_transcript(run_id, r.task_id, r.trial_index)
    if transcript is None:
        out.print("[dim](no transcript stored)[/]")
        return
    out.print(printable(render_transcript(transcript)), markup=False, highlight=False)


def _cell(text: str) -> str:
    """Label text (a comment, a task id...) for a rich table or line: no markup, no
    control characters (an escape sequence would reach the terminal)."""
    return escape(printable(text))


def _ask(question: str, choices: list[str]) -> str | None:
    """One answer from the terminal (or piped stdin); None to stop."""
    short = {c[0]: c for c in choices if c in ("pass", "fail", "skip", "quit")}
    question = _cell(question)
    try:
        answer = Prompt.ask(question, console=out, default="skip")
    except EOFError:
        return None
    answer = short.get(answer.strip().lower(), answer.strip().lower())
    while answer not in choices:
        out.print(f"[red]answer one of {', '.join(choices)}[/]")
        try:
            answer = Prompt.ask(question, console=out, default="skip").strip().lower()
        except EOFError:
            return None
        answer = short.get(answer, answer)
    return None if answer == "quit" else answer


def _label_interactively(
    st: Store,
    run_id: str,
    results: list[TrialResult],
    graders: list[str],
    labeller: str,
    dims: bool,
    relabel: bool,
) -> int:
    labels = LabelStore(st)
    done = {(lb.task_id, lb.trial_index, lb.grader) for lb in labels.list(run_id, labeller=labeller)}
    saved = 0
    for r in results:
        # a grader that did not grade this trial leaves nothing to label on it
        graded = {"", *(gr.grader for gr in r.grades)}
        todo = [g for g in graders if g in graded and (relabel or (r.task_id, r.trial_index, g) not in done)]
        if not todo:
            continue
        _show_trial(st, run_id, r)
        for grader in todo:
            what = "the trial" if grader == "" else f"grader {grader!r}"
            verdict = _ask(f"{what}: pass, fail, skip or quit", ["pass", "fail", "skip", "quit"])
            if verdict is None:
                return saved
            if verdict == "skip":
                continue
            new = [Label(r.task_id, r.trial_index, verdict, grader, "", labeller)]
            for name, allowed in _dimensions(r, grader) if dims and grader else []:
                level = _ask(f"  {name} ({'/'.join(allowed)}, skip, quit)", [*allowed, "skip", "quit"])
                if level is None:
                    return saved
                if level != "skip":
                    new.append(Label(r.task_id, r.trial_index, level, grader, name, labeller))
            new[0].comment = _comment(r, saved)  # the comment is about the grade: it goes with the verdict
            saved += labels.add(run_id, new)
    return saved


def _comment(r: TrialResult, saved: int) -> str:
    """The labeller's comment ("" at the end of the input); text that is not Unicode
    (bytes that are not UTF-8 on a pipe) is asked again, and at the end of the input it is
    an AssayError: the labels saved so far stay."""
    problem = None
    while True:
        try:
            comment = Prompt.ask("  comment (optional)", console=out, default="")
        except EOFError:
            if problem is None:
                return ""
            raise AssayError(
                f"comment on {printable(r.task_id, 80)}#{r.trial_index}: {problem}; that label was not "
                f"saved ({saved} saved before it)"
            ) from None
        problem = text_problem(comment)
        if problem is None:
            return comment
        out.print(f"[red]the comment is not usable ({escape(problem)}); type it again[/]")


def _text_options(**values: str | None) -> None:
    """Refuse an argument or option the store cannot look up or keep (a lone surrogate
    from bytes that are not UTF-8, a NUL)."""
    for name, value in values.items():
        problem = None if value is None else text_problem(value)
        if problem is not None:
            raise AssayError(f"{name}: {problem}")


def _check_import(
    file: str, run_id: str, located: list[LocatedLabel], results: list[TrialResult]
) -> list[Problem]:
    """What the run cannot take of the labels read from ``file``: another run's label, a
    trial it does not have, a grader that did not grade that trial, a dimension that grade
    does not have, a value its choices do not hold (a level off the rubric's scale). One
    problem per line, ``file:line: field: message``."""
    trials = {(r.task_id, r.trial_index): r for r in results}
    tasks = {r.task_id for r in results}
    graders = sorted({g.grader for r in results for g in r.grades})
    problems: dict[int, Problem] = {}
    for item in located:
        found = None if item.line in problems else _import_problem(run_id, item, trials, tasks, graders)
        if found is not None:
            problems[item.line] = Problem(file, item.line, *found)
    return [problems[line] for line in sorted(problems)]


def _import_problem(
    run_id: str,
    item: LocatedLabel,
    trials: dict[tuple[str, int], TrialResult],
    tasks: set[str],
    graders: list[str],
) -> tuple[str, str] | None:
    """(field, message) of what the run cannot take of one imported label, or None."""
    lb = item.label
    trial = f"{printable(lb.task_id, 80)}#{lb.trial_index}"
    r = trials.get((lb.task_id, lb.trial_index))
    if lb.run_id and lb.run_id != run_id:
        return "run_id", f"the label is for run {shown(lb.run_id)}, not {run_id}"
    if r is None:
        field = "trial_index" if lb.task_id in tasks else "task_id"
        return field, f"run {run_id} has no trial {trial}"
    if lb.grader and lb.grader not in graders:
        known = printable(", ".join(graders) or "none", 200)
        return "grader", (
            f'run {run_id} has no grader {shown(lb.grader)} (its graders: {known}; no grader, or "", '
            "labels the whole trial)"
        )
    grade = next((g for g in r.grades if g.grader == lb.grader), None)
    if lb.grader and grade is None:
        return "grader", f"grader {shown(lb.grader)} did not grade trial {trial}"
    if not lb.dimension:
        if lb.value in ("pass", "fail"):
            return None
        what = "an overall verdict" if lb.grader else "the verdict on a whole trial"
        return item.field, f"{what} is pass or fail, not {shown(lb.value)}"
    allowed = dict(label_dimensions(grade)) if grade is not None else {}
    if lb.dimension not in allowed:
        whose = f"grader {shown(lb.grader)}" if lb.grader else "a whole trial (no grader)"
        why = " (its grade was skipped)" if grade is not None and grade.skipped else ""
        return item.dimension_field, f"{whose} has no dimension {shown(lb.dimension)} on trial {trial}{why}"
    if lb.value not in allowed[lb.dimension]:
        choices = ", ".join(allowed[lb.dimension])
        return item.field, f"dimension {shown(lb.dimension)} takes {choices}, not {shown(lb.value)}"
    return None


@app.command()
def label(
    run_id: Annotated[str, typer.Argument(help="The run whose trials to label.")],
    task: Annotated[str | None, typer.Option("--task", help="Only trials of this task.")] = None,
    grader: Annotated[
        str | None, typer.Option("--grader", help="Label this grader's grades (default: the judge graders).")
    ] = None,
    labeller: Annotated[str | None, typer.Option("--labeller", help="Who labels (default: $USER).")] = None,
    import_: Annotated[
        str | None, typer.Option("--import", help="Import labels from this JSONL file.")
    ] = None,
    export: Annotated[
        str | None, typer.Option("--export", help="Export the run's labels to this JSONL file.")
    ] = None,
    dimensions: Annotated[
        bool, typer.Option("--dimensions/--overall-only", help="Also ask each rubric dimension's level.")
    ] = True,
    relabel: Annotated[bool, typer.Option("--relabel", help="Ask again for items already labelled.")] = False,
    review: Annotated[
        bool, typer.Option("--review", help="Only the review queue: disputed or unknown verdicts.")
    ] = False,
    store: StoreOpt = None,
) -> None:
    """Label trials or grades by hand (pass/fail and rubric levels), import or export labels.

    Blind: judge verdicts are not shown. Answers are read from the terminal or piped stdin.
    Example: assay label RUN_ID --grader explanation   |   assay label RUN_ID --import labels.jsonl
    """
    _text_options(RUN_ID=run_id, **{"--task": task, "--grader": grader, "--labeller": labeller})
    if labeller is not None and len(labeller) > MAX_LABELLER:
        raise AssayError(
            f"--labeller: a labeller name has at most {MAX_LABELLER} characters, not {len(labeller)}"
        )
    st = Store(store)
    st.get_run(run_id)
    who = labeller or _default_labeller()
    labels = LabelStore(st)
    if import_ is not None:
        located = [x for x in read_located(import_) if task is None or x.label.task_id == task]
        problems = _check_import(import_, run_id, located, st.load_results(run_id, task) if located else [])
        if problems:
            raise LabelError(problems)
        rows = [x.label for x in located]
        for lb in rows:
            lb.labeller = lb.labeller or who
        n = labels.add(run_id, rows)
        err.print(escape(f"imported {n} label(s) into run {run_id}"))
    if export is not None:
        rows = labels.list(run_id, task_id=task, grader=grader)
        n = write_jsonl(export, rows, st.path)
        err.print(escape(f"exported {n} label(s) of run {run_id} to {export}"))
    if import_ is not None or export is not None:
        return
    results = [r for r in st.load_results(run_id, task) if r.reward is not None or r.grades]
    if review:
        results = [r for r in results if needs_review(r)]
        if not results:
            err.print(f"run {run_id}: nothing waits for review")
            return
    if not results:
        raise AssayError(f"run {run_id} has no trial to label" + (f" for task {task}" if task else ""))
    if grader is not None:
        graders = ["" if grader == TRIAL else grader]
    elif review:
        graders = sorted({g for r in results for g in needs_review(r)})
    else:
        graders = sorted({g.grader for r in results for g in r.grades if is_judge_kind(g.kind)}) or [""]
    n = _label_interactively(st, run_id, results, graders, who, dimensions, relabel)
    err.print(escape(f"saved {n} label(s) by {who}"))


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _render(cal: GraderCalibration) -> None:
    out.rule(f"[bold]{_cell(cal.grader)}[/] · judge vs human")
    table = Table(show_edge=False)
    for col in ("dimension", "n", "agreement", "kappa", "kappa linear", "kappa quadratic"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for d in cal.dimensions:
        table.add_row(
            _cell(d.dimension or "overall"),
            str(d.n),
            _fmt(d.raw_agreement),
            _fmt(d.kappa, 4),
            _fmt(d.kappa_linear, 4),
            _fmt(d.kappa_quadratic, 4),
        )
    out.print(table)
    out.print("confusion matrices (rows: judge, columns: human)")
    for d in cal.dimensions:
        m = Table(title=_cell(d.dimension or "overall"), show_edge=False)
        m.add_column("judge \\ human")
        for lab in d.labels:
            m.add_column(_cell(lab), justify="right")
        for lab, row in zip(d.labels, d.matrix, strict=True):
            m.add_row(_cell(lab), *map(str, row))
        out.print(m)
    if cal.disagreements:
        t = Table(title=f"{len(cal.disagreements)} disagreement(s)", show_edge=False)
        for col in ("task", "trial", "dimension", "judge", "human", "comment"):
            t.add_column(col)
        for c in cal.disagreements[:30]:
            columns = ("task_id", "trial_index", "dimension", "judge", "human", "comment")
            t.add_row(*(_cell(str(c[k])) for k in columns))
        out.print(t)
    if cal.unmatched:
        out.print(f"[yellow]{cal.unmatched} label(s) had no matching judge value and were left out[/]")
    if cal.length_bias is not None:
        out.print(cal.length_bias.message)
    k = cal.kappa
    colour = {"judge usable": "green", "judge not usable": "red"}.get(cal.verdict, "yellow")
    basis = "overall kappa" if cal.overall is not None else "lowest dimension kappa"
    out.print(f"{basis} {_fmt(k, 10)} vs threshold {cal.threshold:g}: [bold {colour}]{cal.verdict}[/]")


def _nothing_to_calibrate(st: Store, run_id: str, grader: str | None, labeller: str | None) -> str:
    """Why a run gave no calibration: no labels, or labels the judge gave no verdict on
    (its grades skipped, e.g. no judge model)."""
    wanted = "" if grader == TRIAL else grader
    labels = LabelStore(st).latest(run_id, grader=wanted, labeller=labeller)
    if not labels:
        return f"run {run_id} has no labels to calibrate against; add some with `assay label {run_id}`"
    labelled = {key[2] for key in labels}
    reasons = sorted(
        {
            f"{g.grader} skipped: {g.reason}" if g.reason else f"{g.grader} skipped"
            for r in st.load_results(run_id)
            for g in r.grades
            if g.skipped and g.grader in labelled
        }
    )
    why = f" ({printable('; '.join(reasons[:3]), 300)})" if reasons else ""
    return (
        f"run {run_id} has {len(labels)} label(s), but the judge gave no verdict on the labelled "
        f"items{why}; nothing to calibrate"
    )


@app.command("calibrate")
def calibrate_run(
    run_id: Annotated[str, typer.Argument(help="A run with judge grades and human labels.")],
    grader: Annotated[
        str | None, typer.Option("--grader", help=f"Only this grader ({TRIAL!r} = labels on whole trials).")
    ] = None,
    threshold: Annotated[float, typer.Option("--threshold", help="Kappa a usable judge reaches.")] = 0.7,
    labeller: Annotated[str | None, typer.Option("--labeller", help="Only this labeller's labels.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge vs human: agreement, Cohen's kappa, weighted kappas, confusion matrices, verdict.
    Exit 1 when a judge is not usable (kappa below the threshold), as a gate would.

    Example: assay calibrate RUN_ID --grader explanation --threshold 0.7
    """
    if not 0 <= threshold <= 1:  # NaN too
        raise AssayError(f"--threshold {threshold:g}: a kappa threshold is a number from 0 to 1 (e.g. 0.7)")
    _text_options(RUN_ID=run_id, **{"--grader": grader, "--labeller": labeller})
    st = Store(store)
    report = calibrate(st, run_id, grader, threshold, labeller)
    if not report:
        raise AssayError(_nothing_to_calibrate(st, run_id, grader, labeller))
    if as_json:
        print_json(
            {"schema": "assay.calibration/1", "run_id": run_id, "graders": [c.to_dict() for c in report]}
        )
    else:
        for cal in report:
            _render(cal)
    if any(cal.verdict == "judge not usable" for cal in report):
        raise typer.Exit(1)


@app.command("judge-pairwise")
def judge_pairwise(
    run_a: Annotated[str, typer.Argument(help="First run (model_a).")],
    run_b: Annotated[str, typer.Argument(help="Second run (model_b).")],
    judge: Annotated[
        list[str], typer.Option("--judge", help="Judge model spec (repeatable), e.g. openai:gpt-4o.")
    ],
    rubric: Annotated[str | None, typer.Option("--rubric", help="Rubric file giving the criteria.")] = None,
    target: Annotated[str, typer.Option("--target", help="final, agent or transcript.")] = "final",
    out_path: Annotated[str | None, typer.Option("--out", help="Write battles as JSONL here.")] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option("--model-option", "-m", help="Judge client setting KEY=VALUE (base_url...)."),
    ] = None,
    cache: Annotated[bool, typer.Option("--cache/--no-cache", help="Cache judge answers on disk.")] = True,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge two runs' outputs pairwise, both orders; win only when both orders agree.

    The battles feed `assay rank`. Example:
    assay judge-pairwise RUN_A RUN_B --judge openai:gpt-4o --out battles.jsonl && assay rank battles.jsonl
    """
    if target not in ("final", "agent", "transcript"):
        raise AssayError(f"--target {target!r}: use final, agent or transcript")
    st = Store(store)
    options: dict[str, Any] = {"cache": cache, **parse_params(model_option or [])}
    try:
        rub = load_rubric(rubric) if rubric else None
    except GraderFileError as exc:
        raise AssayError(str(exc)) from None
    judges = [(spec, shared_model(spec, **options)) for spec in judge]
    bar = Progress(
        TextColumn("judging"), BarColumn(), MofNCompleteColumn(), console=err, disable=not err.is_terminal
    )
    with bar:
        task_id = bar.add_task("judging", total=None)
        report = asyncio.run(
            judge_runs(
                st,
                run_a,
                run_b,
                judges,
                rub,
                target,
                GenerateConfig(temperature=0.0, max_tokens=512),
                progress=lambda done, total: bar.update(task_id, completed=done, total=total),
            )
        )
    if out_path:
        write_battles(out_path, report.battles)
    summary = {
        "schema": "assay.pairwise/1",
        "run_a": run_a,
        "run_b": run_b,
        "judges": judge,
        "out": out_path,
        **report.summary(),
    }
    if as_json:
        print_json(summary)
        return
    out.print(
        f"{summary['battles']} battle(s): {summary['wins_a']} won by A, {summary['wins_b']} by B, "
        f"{summary['ties']} tie(s); {summary['needs_review']} need review"
    )
    out.print(
        "position-bias rate (verdict changed when the order was swapped): "
        + _fmt(report.position_bias_rate())
    )
    if out_path:
        out.print(f"battles written to {out_path}; rank them with: assay rank {out_path}")
