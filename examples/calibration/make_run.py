"""Build the offline calibration demo run: 40 retail explanations graded by an LLM judge.

The judge verdicts (``judge_verdicts.jsonl``: per trial the agent's final explanation and
the judge's level for every dimension of ``examples/rubrics/retail_explanation.yaml``) were
recorded once; this script stores them as run ``calibration-demo`` - grades computed with
the same rubric aggregation as the ``judge`` grader, transcripts holding the answers - so
that the calibration workflow runs without a model or a network:

    python examples/calibration/make_run.py
    assay label calibration-demo --import examples/calibration/human_labels.jsonl
    assay calibrate calibration-demo --grader explanation

``--store`` (or ``$ASSAY_STORE``) chooses the store; an existing demo run is left as is.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from assay.core import Config, GradeResult, Message, RunInfo, RunSpec, TaskMeta, Transcript, TrialResult
from assay.graders import PROMPT_VERSION, load_rubric
from assay.store import Store, now_iso

HERE = Path(__file__).parent
RUBRIC = HERE.parent / "rubrics" / "retail_explanation.yaml"
RUN_ID = "calibration-demo"
JUDGE = "openai:gpt-4o-2024-08-06"


def build(store: Store, run_id: str = RUN_ID) -> bool:
    """Store the demo run; False if it is already there."""
    if store.has_run(run_id):
        return False
    rubric = load_rubric(RUBRIC)
    rows = [json.loads(line) for line in (HERE / "judge_verdicts.jsonl").read_text().splitlines() if line]
    task_ids = sorted({r["task_id"] for r in rows})
    config = Config(agent="recorded:retail-explanations")
    info = RunInfo(
        run_id=run_id,
        created_at=now_iso(),
        suite_name="calibration-demo",
        suite_version="1",
        suite_hash=rubric.hash,
        suite_source=str(HERE),
        config=config,
        config_hash=config.hash,
        seed=0,
        trials_per_task=2,
        task_ids=task_ids,
        spec=RunSpec(suite=str(HERE), agent=config.agent, judges=[JUDGE]),
        status="finished",
    )
    store.create_run(
        info, [TaskMeta(t, description="Explain the outcome of a retail request") for t in task_ids]
    )
    for r in rows:
        levels = r["dimensions"]
        agg = rubric.aggregate(levels)
        metrics = {"temperature": 0.0, "judges": 1.0, "scale_min": 1.0, "scale_max": 4.0}
        for d in rubric.dimensions:
            value = levels[d.name]
            metrics[f"pass:{d.name}" if d.binary else f"dim:{d.name}"] = (
                float(value == "pass") if d.binary else float(value)
            )
        grade = GradeResult(
            grader="explanation",
            kind="judge",
            passed=agg.passed,
            score=agg.score,
            reason="recorded judge verdict",
            category=None if agg.passed else ("veto:" + agg.vetoes[0] if agg.vetoes else "judge_fail"),
            gating=False,
            metrics=metrics,
            version=f"{PROMPT_VERSION}+{rubric.name}@{rubric.hash}",
            judge_model=JUDGE,
        )
        transcript = Transcript(
            [Message("user", "Can you help me with my order?"), Message("assistant", r["answer"])]
        )
        stamp = now_iso()
        store.write_trial(
            TrialResult(
                run_id=run_id,
                task_id=r["task_id"],
                trial_index=r["trial_index"],
                seed=r["trial_index"],
                config_hash=config.hash,
                reward=int(agg.passed),
                termination="user_stop",
                grades=[grade],
                suite_name="calibration-demo",
                suite_version="1",
                started_at=stamp,
                ended_at=stamp,
                transcript=transcript,
            )
        )
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store", default=None, help="store path or URL (default $ASSAY_STORE or .assay/assay.db)"
    )
    args = parser.parse_args()
    store = Store(args.store)
    made = build(store)
    print(f"run {RUN_ID} {'stored' if made else 'already exists'} in {store.url}")


if __name__ == "__main__":
    main()
