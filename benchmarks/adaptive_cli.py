"""Adaptive trials through the command users run: realised error rates and savings.

Every decision below is a whole ``assay run --until-decided`` (and every baseline a whole
``assay run``), called through ``assay.cli.main`` with its argument list: the entry
point of the ``assay`` console script, so the code path is the user's, minus the
process start (``--subprocess`` starts a process per command instead;
``--check-subprocess K`` runs K replicates both ways and compares the decisions).

The agents are Bernoulli agents (benchmarks/bernoulli_agent.py) with known success
rates on suites of 50 and 500 tasks ("Task i of T: say hello", graded by a text check):

- paired (``--against``): baseline 0.80; candidate 0.80 (H0) and 0.85 (+MDE, --mde 0.05);
  *independent* agents (no shared latent: they disagree on 29% of pairs) and
  *correlated* ones (a task effect, icc 0.5, and a shared trial latent, tuned so they
  disagree on 15% of pairs at +MDE);
- rate (``--threshold 0.8 --mde 0.1``): candidate 0.80 (H0) and 0.90 (+MDE); the
  *correlated* variant has the task effect (trials of a task correlated, icc 0.5).

The fixed designs they are measured against (same alpha 0.05 and power 0.8): paired,
Connor's pairs at the true discordance of the +MDE pair (what ``assay plan --paired
--discordance ψ`` says: what a fixed design needs when ψ is known); rate, the exact
one-sided binomial test (82 trials). "saved" is 1 − mean trials run / fixed n, with the
trials in flight at the decision counted as run.

Usage: python benchmarks/adaptive_cli.py [--runs 200] [--tasks 50,500] [--seed 0]
Everything printed is measured in this run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bernoulli_agent import cells  # noqa: E402

from assay.compare.fixed import fixed_rate_trials  # noqa: E402
from assay.compare.planning import plan  # noqa: E402
from assay.stats import wilson_interval  # noqa: E402

AGENT = "python:bernoulli_agent:BernoulliAgent"
ALPHA, POWER = 0.05, 0.8
P0 = 0.80


@dataclass(frozen=True)
class Agents:
    name: str
    icc: float
    coupling: float


@dataclass
class Scenario:
    tasks: int
    agents: str
    design: str  # paired | rate
    truth: str  # H0 | +MDE
    p: float
    fixed_n: int
    docs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.tasks}/{self.agents}/{self.design}/{self.truth}"


def write_suite(folder: Path, tasks: int) -> Path:
    lines = [f"name: bern{tasks}", "defaults: {trials: 1}", "tasks:"]
    for i in range(tasks):
        lines.append(
            f'  - id: t{i:04d}\n    user: {{opening: "Task {i} of {tasks}: say hello."}}\n'
            "    graders:\n      - text: {contains: hello}"
        )
    path = folder / f"suite-{tasks}"
    path.mkdir(parents=True, exist_ok=True)
    (path / "suite.yaml").write_text("\n".join(lines) + "\n")
    return path


def coupling_for(psi: float, pb: float, icc: float, tasks: int) -> float:
    """The candidate's coupling for which baseline (P0) and candidate (``pb``) disagree
    on a share ``psi`` of pairs (bisection: discordance falls as the coupling rises)."""
    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        c = cells(P0, pb, icc, mid, tasks)
        lo, hi = (mid, hi) if c["p10"] + c["p01"] > psi else (lo, mid)
    return (lo + hi) / 2


class Cli:
    """Runs ``assay`` commands in this process (``assay.cli.main``) or in a new one."""

    def __init__(self, subprocess_mode: bool):
        self.subprocess_mode = subprocess_mode

    def __call__(self, *args: str) -> str:
        if self.subprocess_mode:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path[1:]])}
            proc = subprocess.run(
                [sys.executable, "-m", "assay", *args], capture_output=True, text=True, env=env, check=False
            )
            if proc.returncode != 0:
                raise RuntimeError(f"assay {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
            return proc.stdout
        from assay.cli import main

        out, err = io.StringIO(), io.StringIO()
        argv = sys.argv
        sys.argv = ["assay", *args]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        finally:
            sys.argv = argv
        if code != 0:
            raise RuntimeError(f"assay {' '.join(args)} exited {code}: {err.getvalue()[-2000:]}")
        return out.getvalue()


def agent_args(
    p: float, agents: Agents, stream: str, latency_ms: float, coupling: float | None = None
) -> list[str]:
    c = agents.coupling if coupling is None else coupling
    params = {"p": p, "icc": agents.icc, "coupling": c, "stream": stream, "latency_ms": latency_ms}
    out = ["--agent", AGENT]
    for k, v in params.items():
        out += ["-p", f"{k}={v}"]
    return out


def replicate(
    cli: Cli,
    r: int,
    suite: Path,
    store: Path,
    agents: Agents,
    scenarios: dict[str, Scenario],
    args: argparse.Namespace,
) -> None:
    """One baseline and the four decisions of ``agents`` on one suite, seed ``r``."""
    tasks = scenarios[next(iter(scenarios))].tasks
    pairs = args.pairs_correlated if agents.name == "correlated" else args.pairs
    k = max(1, math.ceil(pairs / tasks))
    common = ["--store", str(store), "-j", str(args.concurrency)]
    rounds = ["--round-size", str(args.round_size)] if args.round_size else []
    base = f"base-{agents.name}-{r}"
    cli("run", str(suite), *agent_args(P0, agents, "baseline", 0, coupling=1.0), "-k", str(k),
        "--seed", str(r), "--run-id", base, "--store", str(store), "-j", "32", "--json")  # fmt: skip
    for truth, pb in (("H0", P0), ("+MDE", P0 + args.paired_mde)):
        sc = scenarios[f"{tasks}/{agents.name}/paired/{truth}"]
        tag = truth.lstrip("+")  # a run id takes no "+"
        out = cli("run", "--until-decided", "--against", base, "--mde", str(args.paired_mde),
                  *agent_args(pb, agents, "candidate", args.latency_ms),
                  "--run-id", f"p-{tag}-{agents.name}-{r}",
                  *common, *rounds, "--json")  # fmt: skip
        sc.docs.append(json.loads(out))
    for truth, p in (("H0", P0), ("+MDE", P0 + args.rate_mde)):
        sc = scenarios[f"{tasks}/{agents.name}/rate/{truth}"]
        tag = truth.lstrip("+")
        out = cli("run", str(suite), "--until-decided", "--threshold", str(P0), "--mde", str(args.rate_mde),
                  *agent_args(p, agents, "candidate", args.latency_ms, coupling=0.0), "--seed", str(r),
                  "--run-id", f"r-{tag}-{agents.name}-{r}", *common, *rounds, "--json")  # fmt: skip
        sc.docs.append(json.loads(out))


def summarise(sc: Scenario) -> dict[str, Any]:
    n = len(sc.docs)
    rejected = sum(d["state"]["decision"] == "reject_h0" for d in sc.docs)
    rate = rejected / n
    low, high = wilson_interval(rejected, n)
    run = [d["trials_run"] for d in sc.docs]
    needed = [d["trials_needed"] for d in sc.docs]
    mean_run = sum(run) / n
    sd = math.sqrt(sum((x - mean_run) ** 2 for x in run) / max(1, n - 1))
    reported = [d["saved"] for d in sc.docs if d["saved"] is not None]
    return {
        "scenario": sc.key,
        "runs": n,
        "p_reject": rate,
        "p_reject_ci": [low, high],
        "mc_se": math.sqrt(rate * (1 - rate) / n) if n else None,
        "trials_run": mean_run,
        "trials_needed": sum(needed) / n,
        "fixed_n": sc.fixed_n,
        "saved": 1 - mean_run / sc.fixed_n,
        "saved_se": sd / math.sqrt(n) / sc.fixed_n,
        "saved_needed": 1 - sum(needed) / n / sc.fixed_n,
        "cli_saved": sum(reported) / len(reported) if reported else None,
        "past_decision_max": max(r - q for r, q in zip(run, needed, strict=True)),
        "round_size": max(d["round_size"] for d in sc.docs),
        "undecided": sum(d["verdict"] == "undecided" for d in sc.docs),
        "fallbacks": sum(d.get("fallback") is not None for d in sc.docs),
    }


def acceptance(rows: list[dict[str, Any]], runs: int) -> list[dict[str, Any]]:
    """Per suite and agents: the average saving over the four design points, type-I
    errors within 0.05 + 2 SE, power within 0.8 − 2 SE, nothing past one round."""
    se_alpha = math.sqrt(ALPHA * (1 - ALPHA) / runs)
    se_power = math.sqrt(POWER * (1 - POWER) / runs)
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        tasks, agents, _, _ = row["scenario"].split("/")
        groups.setdefault(f"{tasks}/{agents}", []).append(row)
    out = []
    for name, group in groups.items():
        saved = sum(r["saved"] for r in group) / len(group)
        alpha_ok = all(r["p_reject"] <= ALPHA + 2 * se_alpha for r in group if r["scenario"].endswith("H0"))
        power_ok = all(r["p_reject"] >= POWER - 2 * se_power for r in group if r["scenario"].endswith("+MDE"))
        rounds_ok = all(r["past_decision_max"] < r["round_size"] for r in group)
        out.append(
            {
                "suite/agents": name,
                "average_saved": saved,
                "saved_ok": saved >= 0.40,
                "alpha_ok": alpha_ok,
                "power_ok": power_ok,
                "within_one_round": rounds_ok,
            }
        )
    return out


def decisions(doc: dict[str, Any]) -> tuple[Any, ...]:
    """What does not depend on timing: the decision and what it read."""
    return (doc["verdict"], doc["trials_needed"], doc["state"], doc["design"], doc["fixed_n"])


def check_subprocess(args: argparse.Namespace, root: Path, agents: list[Agents]) -> bool:
    """Run ``--check-subprocess`` replicates in process and by subprocess; same decisions?"""
    tasks = min(args.tasks)
    suite = write_suite(root, tasks)
    same = True
    for r in range(args.check_subprocess):
        found = []
        for mode in (False, True):
            scenarios = make_scenarios([tasks], agents, args)
            store = root / f"check-{int(mode)}-{r}.db"
            for a in agents:
                replicate(Cli(mode), args.seed + r, suite, store, a, scenarios, args)
            found.append([decisions(d) for sc in scenarios.values() for d in sc.docs])
            store.unlink()
        same = same and found[0] == found[1]
    return same


def make_scenarios(
    task_sizes: list[int], agents: list[Agents], args: argparse.Namespace
) -> dict[str, Scenario]:
    out: dict[str, Scenario] = {}
    n_rate = fixed_rate_trials(P0, P0 + args.rate_mde, ALPHA, POWER)
    for tasks in task_sizes:
        for a in agents:
            c = cells(P0, P0 + args.paired_mde, a.icc, a.coupling, tasks)
            psi = c["p10"] + c["p01"]
            n_paired = plan(P0, args.paired_mde, alpha=ALPHA, power=POWER, paired=True, discordance=psi)
            assert n_paired.tasks_needed is not None
            for truth, p in (("H0", P0), ("+MDE", P0 + args.paired_mde)):
                s = Scenario(tasks, a.name, "paired", truth, p, n_paired.tasks_needed)
                out[s.key] = s
            for truth, p in (("H0", P0), ("+MDE", P0 + args.rate_mde)):
                s = Scenario(tasks, a.name, "rate", truth, p, n_rate)
                out[s.key] = s
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="decisions per scenario")
    parser.add_argument("--tasks", default="50,500", help="suite sizes")
    parser.add_argument("--seed", type=int, default=0, help="first replicate's seed")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="-j of the adaptive runs (assay's default)"
    )
    parser.add_argument("--round-size", type=int, default=None, help="--round-size (default: assay's)")
    parser.add_argument("--latency-ms", type=float, default=2.0, help="mean agent latency, so trials overlap")
    parser.add_argument("--paired-mde", type=float, default=0.05)
    parser.add_argument("--rate-mde", type=float, default=0.10)
    parser.add_argument("--pairs", type=int, default=2000, help="baseline trials (tasks x k) to pair with")
    parser.add_argument("--pairs-correlated", type=int, default=1200, help="the same, correlated agents")
    parser.add_argument("--correlated-discordance", type=float, default=0.15)
    parser.add_argument("--subprocess", action="store_true", help="one process per assay command")
    parser.add_argument("--check-subprocess", type=int, default=0, metavar="K")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--raw", type=Path, default=None, help="write what every run reported here")
    parser.add_argument("--merge", type=Path, nargs="+", default=None, help="report on --raw files instead")
    args = parser.parse_args(argv)
    args.tasks = [int(t) for t in str(args.tasks).split(",")]
    start = time.perf_counter()
    coupling = coupling_for(args.correlated_discordance, P0 + args.paired_mde, 0.5, min(args.tasks))
    agents = [Agents("independent", 0.0, 0.0), Agents("correlated", 0.5, coupling)]
    scenarios = make_scenarios(args.tasks, agents, args)
    if args.merge:  # shards run in parallel (different --seed), reported together
        same = None
        for path in args.merge:
            shard = json.loads(path.read_text())
            same = shard["same_as_subprocess"] if same is None else same and shard["same_as_subprocess"]
            for key, docs in shard["docs"].items():
                scenarios[key].docs += docs
        args.runs = min(len(s.docs) for s in scenarios.values())
        rows = [summarise(s) for s in scenarios.values()]
        verdicts = acceptance(rows, args.runs)
        report(rows, verdicts, args, agents, same, time.perf_counter() - start)
        if args.json is not None:
            args.json.write_text(
                json.dumps({"rows": rows, "acceptance": verdicts, "same_as_subprocess": same}, indent=2)
            )
        return 0
    root = Path(tempfile.mkdtemp(prefix="assay-adaptive-"))
    cli = Cli(args.subprocess)
    try:
        same = check_subprocess(args, root, agents) if args.check_subprocess else None
        for tasks in args.tasks:
            suite = write_suite(root, tasks)
            for r in range(args.runs):
                store = root / f"runs-{tasks}-{r}.db"
                for a in agents:
                    group = {k: s for k, s in scenarios.items() if k.startswith(f"{tasks}/{a.name}/")}
                    replicate(cli, args.seed + r, suite, store, a, group, args)
                store.unlink()
                for suffix in ("-wal", "-shm"):
                    Path(f"{store}{suffix}").unlink(missing_ok=True)
                print(f"  {tasks} tasks: replicate {r + 1}/{args.runs} ({time.perf_counter() - start:.0f} s)",
                      file=sys.stderr, flush=True)  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rows = [summarise(s) for s in scenarios.values()]
    verdicts = acceptance(rows, args.runs)
    report(rows, verdicts, args, agents, same, time.perf_counter() - start)
    if args.json is not None:
        args.json.write_text(
            json.dumps({"rows": rows, "acceptance": verdicts, "same_as_subprocess": same}, indent=2)
        )
    if args.raw is not None:
        keep = ("verdict", "state", "trials_run", "trials_needed", "round_size", "saved", "fallback")
        docs = {k: [{f: d.get(f) for f in keep} for d in s.docs] for k, s in scenarios.items()}
        args.raw.write_text(json.dumps({"same_as_subprocess": same, "docs": docs}))
    return 0


def report(
    rows: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    args: argparse.Namespace,
    agents: list[Agents],
    same: bool | None,
    elapsed: float,
) -> None:
    mode = "one process per command" if args.subprocess else "in process through assay.cli.main"
    print(
        f"{args.runs} decisions per scenario, {mode}; alpha {ALPHA}, power {POWER}; -j {args.concurrency}, "
        f"agent latency ~{args.latency_ms:g} ms; correlated agents: icc 0.5, "
        f"coupling {agents[1].coupling:.3f}\n"
    )
    head = (
        f"{'suite/agents/design/truth':<31} {'P(reject) [95% CI]':>22} {'run':>7} {'needed':>7} {'fixed':>6} "
        f"{'saved':>13} {'(needed)':>8} {'CLI says':>8} {'past':>4}/{'rnd':<3}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        ci = f"{r['p_reject']:.3f} [{r['p_reject_ci'][0]:.3f}, {r['p_reject_ci'][1]:.3f}]"
        cli = "" if r["cli_saved"] is None else f"{r['cli_saved']:.1%}"
        saved = f"{r['saved']:.1%} ±{2 * r['saved_se']:.1%}"
        print(
            f"{r['scenario']:<31} {ci:>22} {r['trials_run']:7.1f} {r['trials_needed']:7.1f} "
            f"{r['fixed_n']:6d} "
            f"{saved:>13} {r['saved_needed']:8.1%} {cli:>8} {r['past_decision_max']:>4}/{r['round_size']:<3}"
        )
    print()
    for v in verdicts:
        flags = " ".join(
            f"{k}={'yes' if v[k] else 'NO'}" for k in ("saved_ok", "alpha_ok", "power_ok", "within_one_round")
        )
        print(
            f"{v['suite/agents']:<18} average saved over the 4 design points "
            f"{v['average_saved']:.1%}  {flags}"
        )
    se_a = math.sqrt(ALPHA * (1 - ALPHA) / args.runs)
    se_p = math.sqrt(POWER * (1 - POWER) / args.runs)
    print(f"(Monte Carlo SE at {args.runs} runs: ±{se_a:.3f} near {ALPHA}, ±{se_p:.3f} near {POWER})")
    if same is not None:
        print(f"in process vs one process per command, {args.check_subprocess} replicate(s): "
              f"{'identical decisions' if same else 'DIFFERENT decisions'}")  # fmt: skip
    print(f"elapsed {elapsed:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
