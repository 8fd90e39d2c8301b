"""Gate policies: schema, located errors, summary metric paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.gate import PolicyError, load_policy, policy_from_yaml, summary_path_problem

ROOT = Path(__file__).parents[2]


def test_example_policy_loads_with_lines() -> None:
    policy = load_policy(ROOT / "examples" / "gate.yaml")
    assert policy.name == "retail-release" and policy.version == "1"
    assert [c.metric for c in policy.absolute][:2] == [
        "overall.success_rate",
        "by_split.regression.pass_hat_k.k",
    ]
    assert policy.high_risk is not None and policy.high_risk.each_task_min_pass_hat_k == 1.0
    text = (ROOT / "examples" / "gate.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "name: overall success" in t)
    assert policy.where("absolute[0]") == f"{ROOT / 'examples' / 'gate.yaml'}:{line}"
    assert policy.where("high_risk").startswith(str(ROOT / "examples" / "gate.yaml") + ":")
    assert len(policy.hash) == 16


@pytest.mark.parametrize(
    "path",
    [
        "overall.success_rate",
        "by_split.regression.pass_hat_k.k",
        "by_stratum.edge.pass_at_k.2",
        "by_tag.refund.tasks",
        "process.mean_tool_calls",
        "usage.latency_s.p95",
        "usage.cost_usd.mean",
        "usage.by_model.openai:gpt-4.1.ttft_s.p95",
        "usage.by_model.anthropic:claude-sonnet-4-5.latency_s.p50",
        "usage.by_model.openai:gpt-4o.failed",
        "excluded.share",
        "rag.stages.retrieval.graders.retrieval.metrics.recall@5.mean",
        "rag.stages.generation.pass_rate",
        "rag.failures.generation_only",
    ],
)
def test_valid_summary_paths(path: str) -> None:
    assert summary_path_problem(path) is None


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("overal.success_rate", "is not a summary metric"),
        ("overall.rate", "unknown metric rate"),
        ("by_split.success_rate", "needs a group and a metric"),
        ("overall.pass_hat_k", "needs a k"),
        ("overall.pass_hat_k.x", "needs a k"),
        ("usage.latency_s.p90", "is not a summary metric"),
        ("usage.by_model.openai:gpt-4o.ttft_s.p90", "is not a summary metric"),
        ("usage.by_model.ttft_s.p95", "is not a summary metric"),
        ("rag.stages.retrieval.graders.retrieval.metrics.recall@5", "is not a RAG summary number"),
        ("rag.failures.retrieval", "is not a RAG summary number"),
    ],
)
def test_invalid_summary_paths(path: str, message: str) -> None:
    problem = summary_path_problem(path)
    assert problem is not None and message in problem


def test_every_problem_is_located() -> None:
    text = """\
name: broken
absolute:
  - metric: overal.success_rate
    min: 0.9
  - metric: overall.success_rate
relative:
  - {metric: quality}
  - {metric: latency_s, margin: 0.1, test: strict}
high_risk:
  stratum: null
surprise: 1
"""
    with pytest.raises(PolicyError) as info:
        policy_from_yaml(text, file="gate.yaml")
    lines = str(info.value).splitlines()
    assert "gate.yaml:3: absolute[0].metric: 'overal.success_rate' is not a summary metric" in lines[0]
    assert any(line.startswith("gate.yaml:5: absolute[1]: give min, max or both") for line in lines)
    assert any(line.startswith("gate.yaml:7: relative[0]: give margin") for line in lines)
    assert any(line.startswith("gate.yaml:8: relative[1].test:") for line in lines)
    assert any(line.startswith("gate.yaml:9: high_risk: select high-risk tasks") for line in lines)
    assert any(line.startswith("gate.yaml:11: surprise:") for line in lines)
    assert isinstance(info.value, AssayError) and info.value.exit_code == 2


def test_yaml_and_file_errors() -> None:
    with pytest.raises(PolicyError, match=r"gate.yaml:3: YAML syntax error"):
        policy_from_yaml("absolute:\n  - [oops\n", file="gate.yaml")
    with pytest.raises(PolicyError, match="must be a YAML mapping"):
        policy_from_yaml("- 1\n", file="gate.yaml")
    with pytest.raises(PolicyError, match="has no check"):
        policy_from_yaml("name: empty\n", file="gate.yaml")
    with pytest.raises(PolicyError, match=r"gate\.yaml: cannot read: No such file"):
        load_policy("/nonexistent/gate.yaml")


def test_a_model_name_with_dots_is_read_whole_from_the_summary() -> None:
    from assay.metrics.summary_model import Excluded, GroupStats, ModelTiming, RunSummary

    overall = GroupStats(tasks=0, trials=0, excluded=0, successes=0, success_rate=None)
    summary = RunSummary(overall=overall, excluded=Excluded(trials=0, share=None))
    summary.usage.by_model["openai:gpt-4.1"] = ModelTiming(calls=3, ttft_s={"p95": 0.25})
    assert summary.value_at("usage.by_model.openai:gpt-4.1.ttft_s.p95") == (0.25, None)
    assert summary.value_at("usage.by_model.openai:gpt-4.1.calls") == (3, None)
    value, why = summary.value_at("usage.by_model.openai:gpt-4o.calls")
    assert value is None and why == "usage.by_model has no 'openai:gpt-4o' in this run"


@pytest.mark.parametrize("name", ["gate.yaml", "profile.yaml"])
def test_a_policy_or_profile_over_the_size_limit_is_refused_unread(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gate policies and scoring profiles are read as suite files are (core.sources):
    a file over the size limit is one located problem, never read whole."""
    import assay.core.sources as sources
    from assay.box.profile import load_profile
    from assay.errors import SuiteError

    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 1024 * 1024)
    path = tmp_path / name
    path.write_text("# " + "x" * (1024 * 1024) + "\n")
    load, error = (load_policy, PolicyError) if name == "gate.yaml" else (load_profile, SuiteError)
    with pytest.raises(error, match=rf"{name}: file too large \(1,048,579 bytes, limit 1 MB\)"):
        load(path)
