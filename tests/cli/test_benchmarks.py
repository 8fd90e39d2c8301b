"""Every harness benchmark runs, at tiny sizes, so none can silently break again
(benchmarks/harness.py --small; the figures themselves are in benchmarks/README.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # plain pytest leaves it out; pytest -m slow and CI run it

ROOT = Path(__file__).parents[2]


def test_harness_benchmarks_run_at_small_size(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_STORE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "harness.py"),
            "--small",
            "--no-inspect",
            "--json",
            str(out),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["machine"]["cpus"] >= 1 and "loadavg_1m" in report["machine"]
    assert report["overhead"]["assay"]["trials"] == 20
    assert report["overhead"]["assay"]["cpu_ms_per_trial"]["median"] > 0
    for run in report["concurrency"]:
        assert run["trials"] == 40 and len(run["ratio_to_ideal_each_run"]) == 1
        assert run["ratio_to_ideal"]["median"] >= 1.0  # nothing beats the ideal
        # the agent sleeps the small size's 10 ms, not the full size's 50 ms (5x the ideal)
        assert 1.0 <= run["trials_phase_ratio"]["median"] < 3.0
        # the same waits with no harness, measured beside each run: never under the ideal
        assert len(run["bare_asyncio_ratio_each_run"]) == 1
        assert 1.0 <= run["bare_asyncio_ratio"]["median"] <= run["ratio_to_ideal"]["median"] + 0.5
    multiturn = report["multiturn"]
    assert multiturn["trials"] == 52  # retail's tasks outside its holdout
    assert multiturn["in_process_trials_per_s"]["median"] > 0
    shares = multiturn["share_of_trial_time"]  # each span's own time: none counted twice
    assert set(shares) == {"agent", "tool", "user", "grader", "harness"}
    assert all(v >= 0 for v in shares.values()) and abs(sum(shares.values()) - 1) < 0.01, shares
    durable = report["durability"]
    assert durable["trials"] == 200 and durable["process_peak_rss_mb"] > 0
    assert 0 <= durable["durability_wait_s"]["median"] <= durable["durability_wait_s"]["max"]
    analysis = report["analysis"]
    assert analysis["generated"]["trials"] == 2 * 4 * 2  # two runs of 4 tasks x 2 realistic trials
    for command in ("show", "compare", "report"):
        timing = analysis[command]
        assert timing["runs"] == 1 and timing["wall_s"]["median"] > 0 and timing["peak_mb"]["median"] > 0
    assert 0 < analysis["report"]["html_mb"] < 10


def test_a_span_counts_its_own_time_not_its_childrens() -> None:
    """The multi-turn benchmark's shares of a trial's time: a tool call runs inside the
    agent's ``respond`` span, so counting whole durations gave the tools' time twice
    (and the harness a negative share)."""
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from harness import _own_times
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    def span(id: int, kind: str, duration: float, parent: int | None) -> SimpleNamespace:
        return SimpleNamespace(id=id, kind=kind, duration=duration, parent=parent)

    spans = [
        span(0, "trial", 10.0, None),
        span(1, "turn", 9.0, 0),
        span(2, "agent", 6.0, 1),
        span(3, "tool", 4.0, 2),
        span(4, "user", 1.0, 1),
    ]
    assert _own_times(spans) == [("trial", 1.0), ("turn", 2.0), ("agent", 2.0), ("tool", 4.0), ("user", 1.0)]
