"""Harness benchmarks: what assay itself costs per trial (against inspect_ai), how close
concurrency gets to ideal, how fast the multi-turn retail suite runs, how memory and the
durability window behave over a long run, and how long the commands a user runs on a
million realistic trials take.

    python benchmarks/harness.py                       # everything, full size
    python benchmarks/harness.py --only analysis --store big.db   # reuse a realistic store
    python benchmarks/harness.py --small               # every benchmark, tiny (the test)

Every figure is printed with what it is measured against and the machine's load; each
benchmark repeats (``--repeats``) and reports the median and the range.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cli_timing import assay_command, machine, run_once, time_command  # noqa: E402

# The agents below are named by spec (python:harness:...). Run as a script, this module
# is __main__: it is also what those specs load, so what it sets (latency) reaches them.
sys.modules.setdefault("harness", sys.modules[__name__])

INSPECT_VENV = HERE / ".venv-inspect"
INSPECT_VERSION = "0.3.285"
BENCHMARKS = ("overhead", "concurrency", "multiturn", "durability", "analysis")

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


def hello(conversation):  # the instant agent of the overhead and durability benchmarks
    return "hello"


class SleepyAgent:
    """Answers after a fixed latency: a stand-in for a model call. ``first`` is when
    the first trial since it was last reset made its agent (the trials' start)."""

    latency = 0.05
    first: float | None = None

    def __init__(self, ctx):
        if SleepyAgent.first is None:
            SleepyAgent.first = time.perf_counter()

    async def respond(self, conversation, tools):
        await asyncio.sleep(self.latency)
        return "hello"


@dataclass(frozen=True)
class Sizes:
    overhead: int = 2000
    concurrency: tuple[int, float, int] = (2000, 0.05, 100)  # trials, latency, concurrency
    concurrency_runs: int = 5
    retail_k: int = 16
    durability: int = 100_000
    tasks: int = 10_000
    k: int = 50
    repeats: int = 3


SMALL = Sizes(
    overhead=20,
    concurrency=(40, 0.01, 10),
    concurrency_runs=1,
    retail_k=1,
    durability=200,
    tasks=4,
    k=2,
    repeats=1,
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_STORE"}
    paths = [str(HERE), str(HERE.parent / "src"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _suite(tmp: Path, n: int) -> Path:
    folder = tmp / f"trivial-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(TRIVIAL_SUITE.format(n=n))
    return folder


def _spread(values: list[float], digits: int = 3) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


# --- harness cost -----------------------------------------------------------------------
def assay_overhead(n: int, tmp: Path, repeats: int) -> dict[str, Any]:
    """Wall and CPU time (this process: event loop and writer thread) per trivial trial,
    imports and caches warmed by a first run."""
    import assay

    suite = assay.load_suite(_suite(tmp, n))
    assay.run(suite, agent="python:harness:hello", trials=1, store=str(tmp / "warm.db"))
    wall, cpu = [], []
    for i in range(repeats):
        start, cpu0 = time.perf_counter(), time.process_time()
        run = assay.run(
            suite, agent="python:harness:hello", trials=1, concurrency=8, store=str(tmp / f"overhead{i}.db")
        )
        wall.append(1000 * (time.perf_counter() - start) / n)
        cpu.append(1000 * (time.process_time() - cpu0) / n)
        assert run.summary().overall.success_rate == 1.0
    return {"trials": n, "wall_ms_per_trial": _spread(wall), "cpu_ms_per_trial": _spread(cpu)}


def inspect_overhead(n: int) -> dict[str, Any] | str:
    """inspect_ai on the equivalent task, in its own venv (installed on first use)."""
    python = INSPECT_VENV / "bin" / "python"
    try:
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
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"inspect_ai could not be installed or run here: {exc}"
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "samples": n,
        "wall_ms_per_sample": round(data["per_sample_ms"], 3),
        "cpu_ms_per_sample": round(data.get("cpu_per_sample_ms", float("nan")), 3),
    }


# --- concurrency --------------------------------------------------------------------------
async def _bare_waits(n: int, latency: float, c: int) -> None:
    """The runs' waits with no harness at all: ``c`` asyncio tasks each sleeping
    ``latency`` seconds n/c times (what asyncio's timers alone cost against the ideal)."""

    async def worker() -> None:
        for _ in range(n // c):
            await asyncio.sleep(latency)

    await asyncio.gather(*(worker() for _ in range(c)))


def concurrency(n: int, latency: float, c: int, tmp: Path, k: int, runs: int) -> dict[str, Any]:
    """``runs`` runs of n trials (n/k tasks x k trials) of an agent answering after
    ``latency`` seconds, ``c`` at a time; each against the ideal n * latency / c, after
    one small run that warms the process up. Before each run, the same waits with no
    harness (:func:`_bare_waits`), against the same ideal: the floor asyncio's timers
    set in the same minute (they wake up to a millisecond late)."""
    import assay

    SleepyAgent.latency = latency
    # Imports, the agent's module and a first store are paid once per process, as by a
    # long-lived worker; with --only concurrency nothing else would have paid them.
    assay.run(_suite(tmp, 10), agent="python:harness:SleepyAgent", store=str(tmp / "conc-warm.db"))
    suite = assay.load_suite(_suite(tmp, n // k))
    ideal = n * latency / c
    ratios, phases, floors = [], [], []
    for i in range(runs):
        start = time.perf_counter()
        asyncio.run(_bare_waits(n, latency, c))
        floors.append((time.perf_counter() - start) / ideal)
        marks: dict[str, float] = {}

        def written(result: object, done: int, total: int, marks: dict[str, float] = marks) -> None:
            if done == total:
                marks["last"] = time.perf_counter()

        SleepyAgent.first = None
        start = time.perf_counter()
        assay.run(
            suite,
            agent="python:harness:SleepyAgent",
            trials=k,
            concurrency=c,
            store=str(tmp / f"conc-{k}-{i}.db"),
            progress=written,
        )
        ratios.append((time.perf_counter() - start) / ideal)
        assert SleepyAgent.first is not None
        phases.append((marks["last"] - SleepyAgent.first) / ideal)  # first trial started to last stored
    return {
        "trials": n,
        "tasks": n // k,
        "k": k,
        "latency_s": latency,
        "concurrency": c,
        "ideal_s": round(ideal, 3),
        "ratio_to_ideal_each_run": [round(r, 3) for r in ratios],
        "ratio_to_ideal": _spread(ratios),
        "trials_phase_ratio": _spread(phases),
        "bare_asyncio_ratio_each_run": [round(r, 3) for r in floors],
        "bare_asyncio_ratio": _spread(floors),
    }


# --- multi-turn ------------------------------------------------------------------------------
def _own_times(spans: list[Any]) -> list[tuple[str, float]]:
    """Each span's kind and its own time: its duration less its children's (spans
    nest: the tools an agent calls run inside its ``respond`` span)."""
    children: dict[Any, float] = {}
    for s in spans:
        if s.parent is not None:
            children[s.parent] = children.get(s.parent, 0.0) + s.duration
    return [(s.kind, s.duration - children.get(s.id, 0.0)) for s in spans]


def multiturn(tmp: Path, k: int, repeats: int) -> dict[str, Any]:
    """Retail with the careful agent: trials per second in process (imports and suite
    warm) and as a whole ``assay run`` process; where a trial's time goes."""
    import assay

    assay.run("retail", agent="builtin:retail-careful", trials=1, store=str(tmp / "retail-warm.db"))
    rates, cpu_ms = [], []
    run = None
    for i in range(repeats):
        start, cpu0 = time.perf_counter(), time.process_time()
        run = assay.run("retail", agent="builtin:retail-careful", trials=k, store=str(tmp / f"retail{i}.db"))
        trials = len(run.frame())
        rates.append(trials / (time.perf_counter() - start))
        cpu_ms.append(1000 * (time.process_time() - cpu0) / trials)
    assert run is not None
    shares = {"agent": 0.0, "tool": 0.0, "user": 0.0, "grader": 0.0, "harness": 0.0}
    total = 0.0
    for task_id, index in [(t, 0) for t in run.frame().task_ids[:57]]:
        transcript = run.transcript(task_id, index)
        if transcript is None:
            continue
        total += transcript.spans[0].duration
        for kind, own in _own_times(transcript.spans):  # a tool call runs inside the agent's span
            shares[kind if kind in shares else "harness"] += own
    whole = time_command(
        assay_command(
            "run", "retail", "--agent", "builtin:retail-careful", "-k", str(k), "--store", str(tmp / "cli.db")
        ),
        repeats=1,
        env=_env(),
    )
    trials = len(run.frame())
    return {
        "trials": trials,
        "in_process_trials_per_s": _spread(rates, 1),
        "in_process_cpu_ms_per_trial": _spread(cpu_ms),
        "whole_process_trials_per_s": round(trials / whole["wall_s"]["median"], 1),
        "whole_process": whole,
        "share_of_trial_time": {name: round(v / total, 3) for name, v in shares.items()} if total else {},
    }


# --- a long run: memory and durability ------------------------------------------------------
def durability(n: int, tmp: Path) -> dict[str, Any]:
    """benchmarks/durability.py in its own process: its peak resident set (from the
    kernel), memory over time and the wait of each trial before it was committed."""
    sample = run_once(
        [sys.executable, str(HERE / "durability.py"), str(n), str(tmp / "durability.db")],
        env=_env(),
    )
    if sample["exit"] != 0:
        raise RuntimeError(f"durability run failed: {sample['stderr']}")
    inside = json.loads(sample["stdout"].strip().splitlines()[-1])
    return {"process_peak_rss_mb": round(sample["peak_mb"], 1), "load": round(sample["load"], 2), **inside}


# --- analysis on realistic rows --------------------------------------------------------------
def analysis(tmp: Path, sizes: Sizes, store: str | None) -> dict[str, Any]:
    """The commands a user runs on two runs of ``tasks`` x ``k`` realistic trials (made
    by benchmarks/realistic.py through ``Store.write_trials``, unless ``store`` already
    holds them), each timed as a whole process."""
    from realistic import RUN_A, RUN_B, populate

    made: dict[str, Any] | None = None
    location = store or str(tmp / "realistic.db")
    if store is None or not _has_runs(location):
        made = populate(location, sizes.tasks, sizes.k)
    from assay.store import Store

    Store(location).close()  # a store made by an older assay gains its indexes here, untimed
    html = tmp / "report.html"
    env = _env()
    out: dict[str, Any] = {"store": location, "generated": made}
    commands = {
        "show": ("show", RUN_A, "--store", location),
        "compare": ("compare", RUN_A, RUN_B, "--store", location),
        "report": ("report", RUN_A, RUN_B, "--html", str(html), "--store", location),
    }
    for name, args in commands.items():
        out[name] = time_command(assay_command(*args), repeats=sizes.repeats, env=env)
    out["report"]["html_mb"] = round(html.stat().st_size / 1e6, 2)
    return out


def _has_runs(location: str) -> bool:
    from assay.store import Store

    if "://" not in location and not Path(location).exists():
        return False
    names = {r["run_id"] for r in Store(location).list_runs()}
    return {"bench-a", "bench-b"} <= names


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=BENCHMARKS, action="append")
    parser.add_argument("--no-inspect", action="store_true", help="skip the inspect_ai baseline")
    parser.add_argument("--small", action="store_true", help="tiny sizes: checks that every benchmark runs")
    parser.add_argument("--store", help="analysis: a store that holds (or will hold) bench-a and bench-b")
    parser.add_argument("--tasks", type=int, help="analysis: tasks per run (default 10,000)")
    parser.add_argument("-k", type=int, help="analysis: trials per task (default 50)")
    parser.add_argument("--repeats", type=int, help="runs of each timed command (default 3)")
    parser.add_argument("--json", type=Path, help="also write the report to this file")
    args = parser.parse_args()
    sizes = SMALL if args.small else Sizes()
    overrides = {"tasks": args.tasks, "k": args.k, "repeats": args.repeats}
    sizes = Sizes(**{**sizes.__dict__, **{k: v for k, v in overrides.items() if v is not None}})
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)
    chosen = set(args.only or BENCHMARKS)
    report: dict[str, Any] = {"machine": machine()}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if "overhead" in chosen:
            ours = assay_overhead(sizes.overhead, tmp, sizes.repeats)
            report["overhead"] = {"assay": ours}
            if not args.no_inspect:
                theirs = inspect_overhead(sizes.overhead)
                report["overhead"]["inspect_ai"] = theirs
                if isinstance(theirs, dict):
                    report["overhead"]["ratio_wall"] = round(
                        ours["wall_ms_per_trial"]["median"] / theirs["wall_ms_per_sample"], 4
                    )
                    report["overhead"]["ratio_cpu"] = round(
                        ours["cpu_ms_per_trial"]["median"] / theirs["cpu_ms_per_sample"], 4
                    )
            print(f"overhead: {json.dumps(report['overhead'])}", flush=True)
        if "concurrency" in chosen:
            n, latency, c = sizes.concurrency
            report["concurrency"] = [
                concurrency(n, latency, c, tmp, k, sizes.concurrency_runs) for k in (4, 1)
            ]
            print(f"concurrency: {json.dumps(report['concurrency'])}", flush=True)
        if "multiturn" in chosen:
            report["multiturn"] = multiturn(tmp, sizes.retail_k, sizes.repeats)
            print(f"multiturn: {json.dumps(report['multiturn'])}", flush=True)
        if "durability" in chosen:
            report["durability"] = durability(sizes.durability, tmp)
            print(f"durability: {json.dumps(report['durability'])}", flush=True)
        if "analysis" in chosen:
            report["analysis"] = analysis(tmp, sizes, args.store)
            print(f"analysis: {json.dumps(report['analysis'])}", flush=True)
    report["machine"]["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
