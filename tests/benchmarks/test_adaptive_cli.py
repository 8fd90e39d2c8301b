"""benchmarks/adaptive_cli.py at a tiny size: it runs end to end through the CLI, in
process and by subprocess, and its figures are computed from what the runs report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # plain pytest leaves it out; pytest -m slow and CI run it

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import adaptive_cli

    return adaptive_cli


def test_tiny_benchmark_through_the_cli(bench, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "figures.json"
    argv = ["--runs", "1", "--tasks", "20", "--paired-mde", "0.15", "--correlated-discordance", "0.2"]
    argv += [
        "--rate-mde",
        "0.15",
        "--pairs",
        "200",
        "--pairs-correlated",
        "200",
        "--check-subprocess",
        "1",
        "--json",
        str(out),
    ]
    assert bench.main(argv) == 0
    doc = json.loads(out.read_text())
    assert doc["same_as_subprocess"] is True
    rows = {r["scenario"]: r for r in doc["rows"]}
    assert set(rows) == {
        f"20/{agents}/{design}/{truth}"
        for agents in ("independent", "correlated")
        for design in ("paired", "rate")
        for truth in ("H0", "+MDE")
    }
    for row in rows.values():
        assert row["runs"] == 1 and row["trials_needed"] <= row["trials_run"]
        assert row["past_decision_max"] < row["round_size"]
        assert row["saved"] == pytest.approx(1 - row["trials_run"] / row["fixed_n"])
    assert rows["20/independent/rate/H0"]["fixed_n"] == 30  # exact binomial, 0.80 vs 0.95
    assert {v["suite/agents"] for v in doc["acceptance"]} == {"20/independent", "20/correlated"}
    printed = capsys.readouterr().out
    assert "identical decisions" in printed and "average saved over the 4 design points" in printed


def test_the_agents_have_the_rates_and_discordance_they_claim(bench) -> None:  # type: ignore[no-untyped-def]
    """The Bernoulli agent, played directly, against the quadrature the benchmark uses."""
    import random

    from bernoulli_agent import BernoulliAgent, cells

    from assay.agents import AgentContext

    def agent(p: float, icc: float, coupling: float, stream: str, seed: int) -> BernoulliAgent:
        ctx = AgentContext(
            seed, "none", "", None, "UTC", params={"p": p, "icc": icc, "coupling": coupling, "stream": stream}
        )  # type: ignore[arg-type]
        return BernoulliAgent(ctx)

    rng = random.Random(0)
    tasks, n = 50, 20000
    a_pass = b_pass = p10 = p01 = 0
    for _ in range(n):
        seed, task = rng.getrandbits(62), rng.randrange(tasks)
        opening = f"Task {task} of {tasks}: say hello."
        a = agent(0.8, 0.5, 1.0, "baseline", seed).passes(opening)
        b = agent(0.85, 0.5, 0.5, "candidate", seed).passes(opening)
        a_pass, b_pass, p10, p01 = a_pass + a, b_pass + b, p10 + (a and not b), p01 + (b and not a)
    expected = cells(0.8, 0.85, 0.5, 0.5, tasks)
    se = (0.25 / n) ** 0.5
    assert abs(a_pass / n - 0.8) < 4 * se and abs(b_pass / n - 0.85) < 4 * se
    assert abs(p10 / n - expected["p10"]) < 4 * se and abs(p01 / n - expected["p01"]) < 4 * se


def test_replay_makes_the_commands_paired_decisions(bench, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """benchmarks/adaptive_replay.py regenerates the outcomes of the CLI's runs: its
    decisions must be the command's, and its exact type-I errors at most alpha."""
    import adaptive_replay

    raw = tmp_path / "raw.json"
    common = ["--tasks", "20", "--paired-mde", "0.15", "--correlated-discordance", "0.2"]
    common += ["--pairs", "200", "--pairs-correlated", "200", "--rate-mde", "0.15"]
    assert bench.main(["--runs", "2", *common, "--raw", str(raw)]) == 0
    for agents in ("independent", "correlated"):
        for truth in ("H0", "+MDE"):
            argv = ["--tasks", "20", "--agents", agents, "--truth", truth, "--seeds", "0:2", "--mde", "0.15"]
            argv += ["--pairs", "200", "--pairs-correlated", "200", "--discordance", "0.2", "--raw", str(raw)]
            argv += ["--exact"] if truth == "H0" else []
            args = adaptive_replay.build_parser().parse_args(argv)
            got = adaptive_replay.replay(args)
            assert got["compared"] == 2 and got["same"] == 2, (agents, truth, got)
            assert all(0 <= a <= 0.05 for a in got["alphas"])
            assert len(got["alphas"]) == (2 if truth == "H0" else 0)
            argv = [
                "--design",
                "rate",
                "--tasks",
                "20",
                "--agents",
                agents,
                "--truth",
                truth,
                "--seeds",
                "0:2",
            ]
            rate = adaptive_replay.replay_rate(
                adaptive_replay.build_parser().parse_args([*argv, "--rate-mde", "0.15", "--raw", str(raw)])
            )
            assert rate["compared"] == 2 and rate["same"] == 2, (agents, truth, rate)


def test_replay_reports_the_saving_against_the_benchmarks_fixed_n(bench) -> None:  # type: ignore[no-untyped-def]
    """The replay's saving is against the fixed n adaptive_cli.py uses (Connor's pairs at
    the true discordance of the +MDE pair), and ``--power`` designs the test for another
    power against the same fixed n."""
    from types import SimpleNamespace

    import adaptive_replay

    common = ["--tasks", "20", "--mde", "0.15", "--pairs", "200", "--pairs-correlated", "200"]
    common += ["--discordance", "0.2", "--truth", "+MDE", "--seeds", "0:3"]
    seen: list[float] = []
    monitor = adaptive_replay.PairedMonitor

    def spy(*a, power: float, **kw):  # type: ignore[no-untyped-def]
        seen.append(power)
        return monitor(*a, power=power, **kw)

    for agents in ("independent", "correlated"):
        args = adaptive_replay.build_parser().parse_args([*common, "--agents", agents])
        got = adaptive_replay.replay(args)
        sc = adaptive_replay.Scenario(args)
        cli = bench.make_scenarios(
            [20], [bench.Agents(agents, sc.icc, sc.coupling)], SimpleNamespace(paired_mde=0.15, rate_mde=0.1)
        )
        assert got["fixed_n"] == cli[f"20/{agents}/paired/+MDE"].fixed_n
        assert got["saved_needed"] == pytest.approx(1 - sum(got["needed"]) / 3 / got["fixed_n"])
        seen.clear()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(adaptive_replay, "PairedMonitor", spy)
            higher = adaptive_replay.replay(
                adaptive_replay.build_parser().parse_args([*common, "--agents", agents, "--power", "0.9"])
            )
        assert seen == [0.9] * 3 and higher["fixed_n"] == got["fixed_n"]
    # the command's margin for estimating ψ, and --beta-share 1 without it (as before)
    a, b = adaptive_replay.Scenario(args).outcomes(0)
    made: list[float] = []
    designs = adaptive_replay.Designs

    def record(*a, **kw):  # type: ignore[no-untyped-def]
        d = designs(*a, **kw)
        made.append(d.design_power)
        return d

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(adaptive_replay, "Designs", record)
        adaptive_replay.decide(a, b, 0.15, 0.8, beta_share=1.0)
    assert made == [0.8]
    monitor_now = adaptive_replay.PairedMonitor(a, mde=0.15, alpha=0.05, power=0.8)
    assert monitor_now.design_power == 0.83
