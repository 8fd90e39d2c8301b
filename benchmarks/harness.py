"""Harness benchmarks: what assay itself costs per trial, how close concurrency gets to
ideal, where multi-turn time goes, and how fast analysis is on a million trials.

    python benchmarks/harness.py                 # everything (installs inspect_ai in a side venv)
    python benchmarks/harness.py --only overhead --no-inspect

Every figure is measured in the same run as its baseline and printed as a ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSPECT_VENV = HERE / ".venv-inspect"
INSPECT_VERSION = "0.3.285"

TRIVIAL_SUITE = """\
name: trivial
defaults: {{trials: 1}}
tasks:
  - id: t
    instances: {n}
    user: {{opening: "Say hello."}}
    graders:
      - text: {{contains: hello}}
"""


def hello(conversation):  # the instant agent of the overhead benchmark
    return "hello"


class SleepyAgent:
    """Answers after a fixed latency: a stand-in for a model call."""

    latency = 0.05

    def __init__(self, ctx):
        pass

    async def respond(self, conversation, tools):
        await asyncio.sleep(self.latency)
        return "hello"


def _suite(tmp: Path, n: int) -> Path:
    folder = tmp / f"trivial-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(TRIVIAL_SUITE.format(n=n))
    return folder


def assay_overhead(n: int, tmp: Path) -> dict:
    import assay

    suite = assay.load_suite(_suite(tmp, n))
    assay.run(suite, agent="python:harness:hello", trials=1, store=str(tmp / "warm.db"))  # imports, caches
    start = time.perf_counter()
    run = assay.run(
        suite, agent="python:harness:hello", trials=1, concurrency=8, store=str(tmp / "overhead.db")
    )
    elapsed = time.perf_counter() - start
    assert run.summary()["overall"]["success_rate"] == 1.0
    return {"trials": n, "seconds": round(elapsed, 3), "per_trial_ms": round(1000 * elapsed / n, 3)}


def inspect_overhead(n: int) -> dict | None:
    python = INSPECT_VENV / "bin" / "python"
    if not python.exists():
        print(f"  installing inspect-ai=={INSPECT_VERSION} into {INSPECT_VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(INSPECT_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"inspect-ai=={INSPECT_VERSION}"], check=True
        )
    out = subprocess.run(
        [str(python), str(HERE / "baselines" / "inspect_overhead.py"), str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "samples": n,
        "seconds": round(data["seconds"], 3),
        "per_sample_ms": round(data["per_sample_ms"], 3),
    }


def concurrency(n: int, latency: float, c: int, tmp: Path, k: int = 4) -> dict:
    """n trials (n/k tasks x k trials, as evaluations run them) of an agent answering
    after ``latency`` seconds, ``c`` at a time; ideal wall time n * latency / c."""
    import assay

    SleepyAgent.latency = latency
    suite = assay.load_suite(_suite(tmp, n // k))
    marks: dict[str, float] = {}

    def started(info: object) -> None:
        marks["first"] = time.perf_counter()

    def written(result: object, done: int, total: int) -> None:
        if done == total:
            marks["last"] = time.perf_counter()

    start = time.perf_counter()
    assay.run(
        suite,
        agent="python:harness:SleepyAgent",
        trials=k,
        concurrency=c,
        store=str(tmp / "conc.db"),
        on_start=started,
        progress=written,
    )
    elapsed = time.perf_counter() - start
    ideal = n * latency / c
    phase = marks["last"] - marks["first"]
    return {
        "trials": n,
        "tasks": n // k,
        "k": k,
        "latency_s": latency,
        "concurrency": c,
        "seconds": round(elapsed, 3),
        "ideal_s": round(ideal, 3),
        "ratio_to_ideal": round(elapsed / ideal, 3),
        "trials_phase_s": round(phase, 3),
        "trials_phase_ratio": round(phase / ideal, 3),
    }


def multiturn(tmp: Path, trials: int = 4) -> dict:
    import assay

    start = time.perf_counter()
    run = assay.run("retail", agent="builtin:retail-careful", trials=trials, store=str(tmp / "retail.db"))
    elapsed = time.perf_counter() - start
    shares = {"agent": 0.0, "tool": 0.0, "user": 0.0, "grader": 0.0}
    total = 0.0
    for r in run.results:
        spans = run.transcript(r.task_id, r.trial_index).spans
        total += spans[0].duration
        for s in spans[1:]:
            if s.kind in shares:
                shares[s.kind] += s.duration
    harness = total - sum(shares.values())
    return {
        "trials": len(run.results),
        "seconds": round(elapsed, 3),
        "trials_per_s": round(len(run.results) / elapsed, 1),
        "share_of_trial_time": {k: round(v / total, 3) for k, v in {**shares, "harness": harness}.items()},
    }


def analysis(tmp: Path, tasks: int = 10_000, trials: int = 50) -> dict:
    """Two synthetic runs of tasks x trials rows each (1,000,000 rows in all by default):
    load, summarise both with intervals, compare them paired."""
    import numpy as np

    from assay.core import Config, RunInfo, TaskMeta
    from assay.runner.api import Run
    from assay.stats import (
        cohen_kappa,  # noqa: F401  (warm import)
        mcnemar_exact,
        paired_mean_difference,
    )
    from assay.store import Store, schema

    store = Store(tmp / "million.db")
    rng = np.random.default_rng(0)
    p_task = rng.beta(4, 2, size=tasks)
    metas = [
        TaskMeta(
            f"task-{i:05d}",
            ("normal", "edge", "adversarial", "high_risk")[i % 4],
            "regression",
            (f"tag{i % 7}",),
            1 + i % 3,
        )
        for i in range(tasks)
    ]
    start_write = time.perf_counter()
    for name, shift in (("million-a", 0.0), ("million-b", 0.03)):
        info = RunInfo(
            run_id=name,
            created_at="2026-01-01T00:00:00",
            suite_name="synthetic",
            suite_version="1",
            suite_hash="s",
            suite_source="synthetic",
            config=Config(agent=name),
            config_hash=name,
            seed=0,
            trials_per_task=trials,
            task_ids=[m.task_id for m in metas],
            status="finished",
        )
        store.create_run(info, metas)
        rewards = (rng.random((tasks, trials)) < np.clip(p_task + shift, 0, 1)[:, None]).astype(int)
        latency = rng.lognormal(0, 0.5, size=(tasks, trials))
        rows = [
            {
                "run_id": name,
                "task_id": metas[t].task_id,
                "trial_index": j,
                "seed": 0,
                "reward": int(rewards[t, j]),
                "termination": "user_stop",
                "root_cause": None,
                "error_category": None,
                "input_tokens": 1000,
                "output_tokens": 100,
                "cost_usd": 0.001,
                "latency_s": float(latency[t, j]),
                "started_at": "",
                "ended_at": "",
                "record": "{}",
            }
            for t in range(tasks)
            for j in range(trials)
        ]
        with store.engine.begin() as conn:
            conn.execute(schema.trials.insert(), rows)
    written = time.perf_counter() - start_write

    start = time.perf_counter()
    a, b = Run.load("million-a", store), Run.load("million-b", store)
    sa, sb = a.summary(), b.summary()
    fa, fb = a.frame(), b.frame()
    per_task_a = np.bincount(fa.task, weights=fa.reward) / np.bincount(fa.task)
    per_task_b = np.bincount(fb.task, weights=fb.reward) / np.bincount(fb.task)
    wins_a, wins_b = int((per_task_a > per_task_b).sum()), int((per_task_b > per_task_a).sum())
    p_mcnemar = mcnemar_exact(wins_a, wins_b)
    diff = paired_mean_difference(per_task_b, per_task_a, n_resamples=2000, seed=0)
    elapsed = time.perf_counter() - start
    return {
        "rows": 2 * tasks * trials,
        "seconds": round(elapsed, 3),
        "write_seconds_not_counted": round(written, 1),
        "success_a": sa["overall"]["success_rate"],
        "ci_a": sa["overall"]["success_rate_ci"],
        "success_b": sb["overall"]["success_rate"],
        "delta_b_minus_a": round(float(diff.estimate), 4),
        "delta_ci": [round(float(diff.low), 4), round(float(diff.high), 4)],
        "mcnemar_p": p_mcnemar,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", choices=["overhead", "concurrency", "multiturn", "analysis"], action="append"
    )
    parser.add_argument("--no-inspect", action="store_true", help="skip the inspect_ai baseline")
    parser.add_argument("-n", type=int, default=1000, help="trials of the overhead benchmark")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    os.environ.setdefault("PYTHONPATH", str(HERE))
    chosen = set(args.only or ["overhead", "concurrency", "multiturn", "analysis"])
    report: dict = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if "overhead" in chosen:
            ours = assay_overhead(args.n, tmp)
            print(f"overhead: assay {ours['per_trial_ms']} ms/trial over {args.n} trials", flush=True)
            report["overhead"] = {"assay": ours}
            if not args.no_inspect:
                theirs = inspect_overhead(args.n)
                ratio = ours["per_trial_ms"] / theirs["per_sample_ms"]
                report["overhead"].update(inspect_ai=theirs, ratio_assay_to_inspect=round(ratio, 4))
                print(
                    f"overhead: inspect_ai {theirs['per_sample_ms']} ms/sample; assay/inspect = {ratio:.3f} "
                    f"(target <= 0.10)",
                    flush=True,
                )
        if "concurrency" in chosen:
            report["concurrency"] = concurrency(2000, 0.05, 100, tmp)
            print(f"concurrency: {json.dumps(report['concurrency'])} (target ratio <= 1.15)", flush=True)
        if "multiturn" in chosen:
            report["multiturn"] = multiturn(tmp)
            print(f"multiturn: {json.dumps(report['multiturn'])}", flush=True)
        if "analysis" in chosen:
            report["analysis"] = analysis(tmp)
            print(f"analysis: {json.dumps(report['analysis'])} (target < 5 s)", flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
