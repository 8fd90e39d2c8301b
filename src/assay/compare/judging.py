"""Judging stored runs: a judge's verdicts against human labels of a run's trials
(:func:`calibrate`, ``assay calibrate``), and two runs' outputs judged pairwise
(:func:`judge_runs`, ``assay judge pairwise``). The judging itself lives in the graders
layer (:mod:`assay.graders.calibration`, :mod:`assay.graders.pairwise`); here the runs
are read from the store."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from ..core.results import TrialResult
from ..graders.bias import LengthBias, length_bias
from ..graders.calibration import TRIAL, GraderCalibration, agreement, judge_values
from ..graders.judge import answer_of
from ..graders.pairwise import Battle, PairInput, PairwiseReport, judge_pair
from ..graders.registry import is_judge_kind
from ..graders.rubric import Rubric
from ..llm.spec import ChatModel
from ..llm.types import GenerateConfig
from ..store.labels import LabelStore
from ..store.store import Store, now_iso


def _length_bias(store: Store, run_id: str, results: list[TrialResult], grader: str) -> LengthBias | None:
    scores, lengths = [], []
    for r in results:
        judged = (g for g in r.grades if g.grader == grader and is_judge_kind(g.kind))
        g = next((g for g in judged if g.score is not None), None)
        if g is None or g.score is None:
            continue
        transcript = store.load_transcript(run_id, r.task_id, r.trial_index)
        if transcript is None:
            continue
        scores.append(g.score)
        lengths.append(sum(len(t) for t in transcript.agent_texts()))
    return length_bias(scores, lengths) if scores else None


def calibrate(
    store: Store,
    run_id: str,
    grader: str | None = None,
    threshold: float = 0.7,
    labeller: str | None = None,
) -> list[GraderCalibration]:
    """Judge-vs-human agreement of every labelled grader of a run (or of ``grader``;
    ``(trial reward)`` or "" means the labels on whole trials)."""
    store.get_run(run_id)  # RunNotFound early
    wanted = "" if grader == TRIAL else grader
    labels = LabelStore(store).latest(run_id, grader=wanted, labeller=labeller)
    results = store.load_results(run_id)
    judged = judge_values(results)
    pairs: dict[str, dict[str, list[tuple[str, str, Any]]]] = defaultdict(lambda: defaultdict(list))
    unmatched: dict[str, int] = defaultdict(int)
    for (task_id, index, g, dim), lb in sorted(labels.items()):
        value = judged.get((g, task_id, index, dim))
        if value is None or (value in ("pass", "fail")) != (lb.value in ("pass", "fail")):
            unmatched[g] += 1
            continue
        pairs[g][dim].append((value, lb.value, lb))
    out = []
    for g in sorted(pairs):
        cal = GraderCalibration(g or TRIAL, threshold, unmatched=unmatched.get(g, 0))
        for dim in sorted(pairs[g]):
            rows = pairs[g][dim]
            cal.dimensions.append(agreement(dim, [j for j, _, _ in rows], [h for _, h, _ in rows]))
            cal.disagreements.extend(
                {
                    "task_id": lb.task_id,
                    "trial_index": lb.trial_index,
                    "dimension": dim or "overall",
                    "judge": j,
                    "human": h,
                    "labeller": lb.labeller,
                    "comment": lb.comment,
                }
                for j, h, lb in rows
                if j != h
            )
        if g:
            cal.length_bias = _length_bias(store, run_id, results, g)
        out.append(cal)
    return out


def run_label(store: Store, run_id: str) -> str:
    info = store.get_run(run_id)
    return info.config.model or info.config.agent


async def judge_runs(
    store: Store,
    run_a: str,
    run_b: str,
    judges: Sequence[tuple[str, ChatModel]],
    rubric: Rubric | None = None,
    target: str = "final",
    config: GenerateConfig | None = None,
    concurrency: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> PairwiseReport:
    """Judge the outputs of two runs task by task (trial i against trial i)."""
    name_a, name_b = run_label(store, run_a), run_label(store, run_b)
    if name_a == name_b:
        name_a, name_b = run_a, run_b
    tasks_a = {t.task_id: t for t in store.load_tasks(run_a)}
    trials_a = {r.key for r in store.load_results(run_a)}
    trials_b = {r.key for r in store.load_results(run_b)}
    report = PairwiseReport()
    jobs: list[tuple[str, int, PairInput]] = []
    for task_id, index in sorted(trials_a & trials_b):
        ta = store.load_transcript(run_a, task_id, index)
        tb = store.load_transcript(run_b, task_id, index)
        if ta is None or tb is None:
            report.skipped.append(f"{task_id}#{index}: no transcript")
            continue
        a, b = answer_of(ta, target), answer_of(tb, target)
        if not a.strip() or not b.strip():
            report.skipped.append(f"{task_id}#{index}: an output is empty")
            continue
        opening = next(iter(ta.user_texts()), "")
        question = "\n".join(x for x in (tasks_a[task_id].description, opening) if x)
        jobs.append((task_id, index, PairInput(question, a, b)))
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(spec: str, model: ChatModel, task_id: str, index: int, item: PairInput) -> Battle:
        nonlocal done
        async with gate:
            j = await judge_pair(model, item, rubric, config)
        done += 1
        if progress is not None:
            progress(done, len(jobs) * len(judges))
        return Battle(
            name_a,
            name_b,
            j.winner,
            f"{task_id}#{index}",
            now_iso(),
            spec,
            j.consistent,
            j.needs_review,
            j.first,
            j.second,
            j.reason,
        )

    report.battles = list(
        await asyncio.gather(*(one(s, m, t, i, item) for s, m in judges for t, i, item in jobs))
    )
    return report
