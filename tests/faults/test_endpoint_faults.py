"""The endpoint-fault matrix: an LLM agent and an LLM user (``openai:``, real SDK, real
HTTP on 127.0.0.1) against a fake endpoint that rate-limits with long ``Retry-After``,
hangs, answers HTTP 200 with broken or foreign bodies, is dead, or is flaky.

The promise checked in every case: no trial is blamed on the agent for a model fault
(each trial either ends as it does against a healthy endpoint, or as a harness error
with root cause MODEL), and an endpoint that stays down stops the run in bounded time
(exit code 3) with the run resumable.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import CliResult, assay_main
from tests.support.fake_llm_server import FakeLLMServer, Fault
from tests.support.scripted_brain import brain

import assay
from assay.llm.errors import EndpointUnreachable
from assay.runner.breaker import ModelEndpointDown
from assay.store import Store

TASKS = ["refund-in-window-email-1", "cancel-pending-1", "refund-15-days-old-1"]
MORE = [*TASKS, "approved-claim-1", "cancel-pending-2"]
FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "jitter_seed": 1, "api_key": "test"}
LIMITS = {"timeout_s": 20}  # generous: the fake "model" runs a whole agent per request


def run_against(srv: FakeLLMServer, store: Path, **kw: Any) -> assay.Run:
    options = {"base_url": srv.openai_base_url, **FAST, **kw.pop("model_options", {})}
    return assay.run(
        "retail",
        agent="openai:scripted",
        user="openai:scripted",
        task_ids=kw.pop("task_ids", TASKS),
        trials=kw.pop("trials", 1),
        model_options=options,
        limits=kw.pop("limits", LIMITS),
        store=str(store),
        concurrency=kw.pop("concurrency", 3),
        **kw,
    )


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Any]:
    """Each trial's reward and root cause against a healthy endpoint."""
    with FakeLLMServer(brain) as srv:
        run = run_against(srv, tmp_path_factory.mktemp("healthy") / "s.db", task_ids=MORE, trials=2)
    return {r.key: (r.reward, r.root_cause) for r in run.results}


def never_misblamed(results: list[Any], healthy: dict[tuple[str, int], Any]) -> int:
    """Every trial ends as against a healthy endpoint or as a MODEL harness error; the
    number of the latter."""
    model_errors = 0
    for r in results:
        if r.root_cause == "MODEL":
            assert r.termination == "harness_error" and r.reward is None, r
            model_errors += 1
            continue
        assert (r.reward, r.root_cause) == healthy[r.key], (r.key, r.termination, r.outcome.error)
    return model_errors


def agent_blamed(results: list[Any]) -> list[Any]:
    return [r for r in results if r.root_cause == "AGENT"]


# -- transient faults: retried, every trial ends as against a healthy endpoint ----------


@pytest.mark.parametrize(
    "kinds",
    [
        pytest.param([Fault("429", retry_after=0.6)], id="429-retry-after-longer-than-a-turn"),
        pytest.param(["malformed"], id="malformed-200"),
        pytest.param(["wrong_shape"], id="wrong-shape-200"),
        pytest.param(["429", "500", "drop", "malformed", "wrong_shape", Fault("slow", slow_s=3)], id="flaky"),
    ],
)
def test_transient_faults_are_retried_and_never_blamed_on_the_agent(
    kinds: list[Any], healthy: dict[tuple[str, int], Any], tmp_path: Path
) -> None:
    with FakeLLMServer(brain, fault_rate=0.25, fault_seed=7, fault_kinds=kinds) as srv:
        # one trial per task meets each single kind many times; the mixed case needs two to meet every kind
        trials = 2 if len(kinds) > 1 else 1
        run = run_against(srv, tmp_path / "s.db", trials=trials, model_options={"timeout_s": 1.0})
    assert len(srv.faults) > 0
    assert never_misblamed(run.results, healthy) == 0  # every fault retried, none blamed
    summary = run.summary().to_dict()
    retries = sum(role["retries"] for role in summary["usage"]["by_role"].values())
    assert retries >= len(srv.faults)


@pytest.mark.slow
def test_a_long_retry_after_does_not_eat_the_trials_time(
    healthy: dict[tuple[str, int], Any], tmp_path: Path
) -> None:
    """Each trial is asked to wait 5 s, longer than its whole time limit (4 s): the
    waits are the model's, so no trial times out."""
    with FakeLLMServer(brain) as srv:
        srv.schedule(*[Fault("429", retry_after=5)] * 3)
        run = run_against(srv, tmp_path / "s.db", limits={"timeout_s": 4.0})
    assert never_misblamed(run.results, healthy) == 0
    assert [r.termination for r in run.results if r.termination == "timeout"] == []
    spans = [
        s
        for r in run.results
        for s in run.transcript(r.task_id, r.trial_index).spans
        if s.kind == "llm" and s.attributes.get("waited_s")
    ]
    assert sum(s.attributes["waited_s"] for s in spans) >= 15


# -- persistent faults: MODEL errors, then the breaker stops the run -------------------


@pytest.mark.parametrize(
    "down", ["hang", "malformed", "wrong_shape", "503", "429"], ids=lambda d: f"down-{d}"
)
def test_an_endpoint_that_stays_down_stops_the_run_resumably(
    down: str, healthy: dict[tuple[str, int], Any], tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    with FakeLLMServer(brain, retry_after=5.0) as srv:
        srv.down = down
        started = time.monotonic()
        with pytest.raises(ModelEndpointDown, match="3 trials in a row") as exc:
            run_against(
                srv,
                store,
                task_ids=MORE,
                concurrency=1,
                run_id="down",
                model_options={"max_retries": 2, "max_retry_after_s": 0.05},
                limits={"timeout_s": 1.0},
            )
        elapsed = time.monotonic() - started
        assert elapsed < 15, elapsed  # three trials of at most ~1 s each, not the whole run
        assert "--resume down" in str(exc.value)
        st = Store(store)
        assert st.get_run("down").status == "interrupted"
        results = st.load_results("down")
        assert len(results) == 3 and all(r.root_cause == "MODEL" for r in results)
        assert all(r.error_category == "model_unavailable" for r in results)
        assert agent_blamed(results) == []
        srv.down = False  # the endpoint is back: the run completes
        run = assay.resume("down", store=st, secrets={"model_options": {"api_key": "test"}})
    assert run.info.status == "finished" and len(run.results) == len(MORE)
    # Every trial ends as against a healthy endpoint; on a loaded machine one may still find
    # the model slower than its 1 s limit: then it is the model's fault, said so, never the agent's.
    late = [r for r in run.results if r.root_cause == "MODEL"]
    assert never_misblamed(run.results, healthy) == len(late) < len(MORE) // 2, late


def test_a_hanging_endpoint_is_the_models_fault_not_an_agent_timeout(tmp_path: Path) -> None:
    """Per-request timeouts come from the trial's remaining time: the request gives up
    just before the trial's limit, as a model error."""
    with FakeLLMServer(brain) as srv:
        srv.down = "hang"
        started = time.monotonic()
        with pytest.raises(ModelEndpointDown):
            run_against(srv, tmp_path / "s.db", limits={"timeout_s": 1.5}, run_id="hang")
        elapsed = time.monotonic() - started
    assert elapsed < 10
    results = Store(tmp_path / "s.db").load_results("hang")
    assert results and all(r.termination == "harness_error" and r.root_cause == "MODEL" for r in results)
    for r in results:  # the request timed out just before the limit, or the limit cut it
        error = r.outcome.error
        assert "no answer within the trial's remaining" in error or "ran out waiting on the agent" in error


def test_a_request_rejected_on_its_own_merits_does_not_trip_the_breaker(tmp_path: Path) -> None:
    with FakeLLMServer(brain) as srv:
        srv.down = "400"
        run = run_against(srv, tmp_path / "s.db", task_ids=[*TASKS, "cancel-pending-2"])
    assert run.info.status == "finished"
    assert {r.error_category for r in run.results} == {"model_rejected"}
    assert agent_blamed(run.results) == []


# -- fail fast: checks before the first trial -----------------------------------------


def _dead_url() -> str:
    with FakeLLMServer() as srv:
        return srv.openai_base_url


def test_a_dead_endpoint_fails_before_the_first_trial_and_stores_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with pytest.raises(EndpointUnreachable, match=r"agent openai:scripted at .*cannot be reached"):
        assay.run(
            "retail",
            agent="openai:scripted",
            model_options={"base_url": _dead_url(), **FAST},
            task_ids=TASKS,
            store=str(store),
        )
    assert Store(store).list_runs() == []


def test_a_dead_endpoint_with_checks_off_is_stopped_by_the_breaker(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with pytest.raises(ModelEndpointDown):
        assay.run(
            "retail",
            agent="openai:scripted",
            model_options={"base_url": _dead_url(), **FAST, "max_retries": 1},
            task_ids=[*TASKS, "cancel-pending-2"],
            store=str(store),
            check_models=False,
            concurrency=1,
            run_id="dead",
        )
    st = Store(store)
    assert st.get_run("dead").status == "interrupted"
    assert len(st.load_results("dead")) == 3


def cli(*args: str) -> CliResult:
    """``assay ARGS`` in this process, with no model credentials in the environment."""
    keys = [k for k in os.environ if k.startswith(("OPENAI_", "ANTHROPIC_"))]
    return assay_main(*args, env=dict.fromkeys(keys))


def test_a_judge_without_a_key_fails_at_start_with_the_real_cause(tmp_path: Path) -> None:
    proc = cli("run", "retail", "--judge", "openai:gpt-4o", "--store", str(tmp_path / "s.db"))
    assert proc.returncode == 2, proc.stderr
    assert "judge openai:gpt-4o" in proc.stderr and "OPENAI_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert Store(tmp_path / "s.db").list_runs() == []


def test_cli_a_hanging_endpoint_ends_the_run_with_exit_3_in_bounded_time(tmp_path: Path) -> None:
    with FakeLLMServer(brain) as srv:
        srv.down = "hang"
        started = time.monotonic()
        proc = cli(
            "run",
            "retail",
            "--agent",
            "openai:scripted",
            "-m",
            f"base_url={srv.openai_base_url}",
            "-m",
            "api_key=test",
            "--spec",
            str(_limits_spec(tmp_path, 1.0)),
            "--store",
            str(tmp_path / "s.db"),
            "--run-id",
            "hung",
            "--json",
        )
        elapsed = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr
    assert elapsed < 60
    assert "harness failure" in proc.stderr and "--resume hung" in proc.stderr
    assert "Traceback" not in proc.stderr
    st = Store(tmp_path / "s.db")
    assert st.get_run("hung").status == "interrupted"
    assert all(r.root_cause == "MODEL" for r in st.load_results("hung"))


def _limits_spec(tmp_path: Path, timeout_s: float) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(f"limits: {{timeout_s: {timeout_s}}}\nuser: scripted\n")
    return path


def test_cli_a_dead_endpoint_exits_3_before_any_trial(tmp_path: Path) -> None:
    proc = cli(
        "run",
        "retail",
        "--agent",
        "openai:scripted",
        "-m",
        f"base_url={_dead_url()}",
        "--store",
        str(tmp_path / "s.db"),
    )
    assert proc.returncode == 3, proc.stderr
    assert "cannot be reached" in proc.stderr and "Traceback" not in proc.stderr
    assert Store(tmp_path / "s.db").list_runs() == []


def test_summary_json_of_a_model_fault_run_names_the_model(tmp_path: Path) -> None:
    """A run with a few MODEL errors finishes with exit 3 and counts them apart."""
    with FakeLLMServer(brain) as srv:
        srv.schedule(*["503"] * 3)
        proc = cli(
            "run",
            "retail",
            "--agent",
            "openai:scripted",
            "--task",
            TASKS[0],
            "-k",
            "1",
            "-m",
            f"base_url={srv.openai_base_url}",
            "-m",
            "max_retries=2",
            "-m",
            "backoff_base_s=0.01",
            "--store",
            str(tmp_path / "s.db"),
            "--json",
        )
    assert proc.returncode == 3, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["excluded"]["by_root_cause"] == {"MODEL": 1}
