"""Realistic stores for the analysis benchmarks: rows written by the store's own write
path (``Store.write_trials``), made from real trials.

The retail suite is run for real (``builtin:retail-careful`` and ``builtin:retail-hasty``,
k = 4 each); its finished trials (record, grades, nine process metrics, transcript) are
then replicated under new keys until a run has ``tasks`` x ``k`` trials:

- replica task ``<retail task>@<n>`` copies a retail task's metadata (stratum, split,
  tags, difficulty, hash);
- each replica trial is a real trial of that retail task, picked at random from the
  careful agent's trials (with a per-task probability drawn from Beta(6, 1) for run A,
  Beta(4, 1) for run B) or else the hasty agent's, so tasks are flaky and the runs
  differ the way two agents do (A about 85%, B about 80% success);
- 1% of trials become harness errors (reward None, root cause MODEL, no grades), as an
  endpoint outage leaves them;
- usage is added as an LLM agent and user report it (the built-in agents call no
  model): per role calls, input/output tokens and cost, and the trial's token and cost
  totals, drawn from log-normal distributions; latency likewise (median 8 s).

``python benchmarks/realistic.py STORE --tasks 10000 -k 50`` writes runs ``bench-a`` and
``bench-b`` (1,000,000 trials: about 6.5 GB for SQLite with store schema 5, 8.3 GB before;
200,000 trials measured 1.30 GB and 1.67 GB).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

RUN_A, RUN_B = "bench-a", "bench-b"
_BATCH = 1000


def _sources(seed_store: str) -> tuple[Any, Any, dict[str, dict[str, list[Any]]]]:
    """Run retail with both built-in agents into ``seed_store``; the finished trials
    with their transcripts, by task and agent."""
    import assay
    from assay.store import Store

    careful = assay.run("retail", agent="builtin:retail-careful", trials=4, store=seed_store, seed=0)
    hasty = assay.run("retail", agent="builtin:retail-hasty", trials=4, store=seed_store, seed=0)
    store = Store(seed_store)
    by_task: dict[str, dict[str, list[Any]]] = {}
    for name, run in (("careful", careful), ("hasty", hasty)):
        for r in store.load_results(run.run_id):
            r.transcript = store.load_transcript(run.run_id, r.task_id, r.trial_index)
            by_task.setdefault(r.task_id, {}).setdefault(name, []).append(r)
    return careful, hasty, by_task


def _usage(rng: random.Random) -> dict[str, Any]:
    """Usage an LLM agent and simulated user would report for one conversation."""
    roles: dict[str, dict[str, Any]] = {}
    for role, scale in (("agent", 1.0), ("user", 0.4)):
        calls = rng.randint(3, 9)
        t_in = int(rng.lognormvariate(8.3, 0.4) * scale) * calls // 4
        t_out = int(rng.lognormvariate(5.3, 0.5) * scale) * calls // 4
        roles[role] = {
            "calls": calls,
            "input_tokens": t_in,
            "output_tokens": t_out,
            "cache_read_tokens": t_in // 3,
            "cost_usd": round(t_in * 2.5e-6 + t_out * 1e-5, 6),
            "retries": int(rng.random() < 0.02),
            "cached_calls": 0,
            "missing_usage": 0,
        }
    return roles


def _replica(src: Any, run_id: str, task_id: str, index: int, rng: random.Random) -> Any:
    usage = _usage(rng)
    result = replace(
        src,
        run_id=run_id,
        task_id=task_id,
        trial_index=index,
        seed=rng.getrandbits(31),
        usage=usage,
        input_tokens=sum(u["input_tokens"] for u in usage.values()),
        output_tokens=sum(u["output_tokens"] for u in usage.values()),
        cost_usd=round(sum(u["cost_usd"] for u in usage.values()), 6),
        latency_s=rng.lognormvariate(2.08, 0.5),
    )
    if rng.random() < 0.01:  # an endpoint outage: excluded, not the agent's doing
        result = replace(
            result,
            reward=None,
            termination="harness_error",
            grades=[],
            root_cause="MODEL",
            error_category=None,
        )
    return result


def populate(
    store_location: str,
    tasks: int = 10_000,
    k: int = 50,
    *,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, Any]:
    """Write runs ``bench-a`` and ``bench-b`` (``tasks`` x ``k`` trials each) into
    ``store_location``; returns what was written and how long it took."""
    from assay.store import Store

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        careful, hasty, by_task = _sources(str(Path(tmp) / "seed.db"))
    retail_ids = sorted(by_task)
    metas = {m.task_id: m for m in careful.tasks}
    store = Store(store_location)
    rng = random.Random(seed)
    written = 0
    for run_id, alpha in ((RUN_A, 6.0), (RUN_B, 4.0)):
        ids = [
            (retail_ids[t % len(retail_ids)], f"{retail_ids[t % len(retail_ids)]}@{t:06d}")
            for t in range(tasks)
        ]
        replica_metas = [replace(metas[orig], task_id=new) for orig, new in ids]
        info = careful.info.model_copy(
            update={
                "run_id": run_id,
                "config": careful.info.config.model_copy(update={"agent": f"bench:{run_id}"}),
                "config_hash": run_id,
                "trials_per_task": k,
                "task_ids": [new for _, new in ids],
                "status": "running",
            }
        )
        store.create_run(info, replica_metas)
        batch: list[Any] = []
        for orig, new in ids:
            careful_share = rng.betavariate(alpha, 1.0)
            for j in range(k):
                pool = by_task[orig]["careful" if rng.random() < careful_share else "hasty"]
                batch.append(_replica(rng.choice(pool), run_id, new, j, rng))
                if len(batch) >= _BATCH:
                    written += store.write_trials(batch)
                    batch = []
                    if progress:
                        print(f"  {written} trials written", file=sys.stderr, flush=True)
        written += store.write_trials(batch)
        store.set_status(run_id, "finished")
    store.close()
    return {
        "runs": [RUN_A, RUN_B],
        "tasks": tasks,
        "k": k,
        "trials": written,
        "seconds": round(time.perf_counter() - started, 1),
        "source_runs": [careful.run_id, hasty.run_id],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("store", help="store path or SQLAlchemy URL")
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("-k", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(populate(args.store, args.tasks, args.k, seed=args.seed, progress=True))


if __name__ == "__main__":
    main()
