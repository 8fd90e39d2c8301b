"""A long run watched from inside: memory over time and how long each finished trial
waits before it is durable (committed to the store).

    python benchmarks/durability.py 100000 STORE      # prints one JSON line

The run is the trivial suite (an instant agent, one text grader) with N trials (N/4
tasks x 4). A thread samples the process's resident set every 0.25 s; the progress
callback, called once a trial's batch is committed, measures now minus the trial's end
time. Run it as its own process (the harness does) so that the peak is the run's.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

SUITE = """\
name: trivial
defaults: {{trials: {k}}}
tasks:
  - id: t
    instances: {n}
    user: {{opening: "Say hello."}}
    graders:
      - text: {{contains: hello}}
"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main(n: int, store: str) -> dict[str, object]:
    import assay

    samples: list[tuple[float, float]] = []
    waits: list[float] = []
    stop = threading.Event()
    start = time.perf_counter()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.perf_counter() - start, rss_mb()))
            stop.wait(0.25)

    def written(result: object, done: int, total: int) -> None:
        ended = datetime.fromisoformat(result.ended_at)  # type: ignore[attr-defined]
        waits.append(time.time() - ended.timestamp())

    sampler = threading.Thread(target=sample, daemon=True)
    k = 4
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "suite"
        folder.mkdir()
        (folder / "suite.yaml").write_text(SUITE.format(n=max(1, n // k), k=k))
        suite = assay.load_suite(folder)
        rss_start = rss_mb()
        sampler.start()
        run = assay.run(suite, agent="python:harness:hello", concurrency=8, store=store, progress=written)
        stop.set()
        sampler.join()
    elapsed = time.perf_counter() - start
    ordered = sorted(waits)
    rss = [m for _, m in samples] or [rss_start]
    tenth = max(1, len(rss) // 10)
    return {
        "trials": len(run.frame()),
        "seconds": round(elapsed, 2),
        "trials_per_s": round(len(waits) / elapsed, 1),
        "rss_mb": {
            "at_start": round(rss_start, 1),
            "peak_sampled": round(max(rss), 1),
            "first_tenth_mean": round(statistics.mean(rss[:tenth]), 1),
            "last_tenth_mean": round(statistics.mean(rss[-tenth:]), 1),
        },
        "durability_wait_s": {
            "median": round(statistics.median(ordered), 4),
            "p99": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 4),
            "max": round(ordered[-1], 4),
        },
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print(json.dumps(main(int(sys.argv[1]), sys.argv[2])))
