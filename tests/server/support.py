"""Helpers for viewer, report and browser tests: small real runs of the toy domain, and
the viewer served over real HTTP on 127.0.0.1 in a background thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import assay
from assay.store import Store

SUITE = """\
name: bank
domain: toy
defaults: {trials: 3}
tasks:
  - {id: dep, template: deposit, instances: 4, tags: [money, deposit]}
  - {id: dep-edge, template: deposit, stratum: edge, split: capability, difficulty: 2, tags: [money]}
  - {id: dep-hard, template: deposit, stratum: high_risk, difficulty: 3, tags: [money, hard]}
"""
AGENT = "python:tests.toyagents:DepositAgent"


def toy_runs(tmp: Path, store: Store, *, k: int = 3) -> tuple[str, str]:
    """A careful run and a flaky one (skips confirmation half the time), same seed.

    The runs happen in a worker thread: ``assay.run`` starts its own event loop, and the
    calling thread may already have one (Playwright's sync API does)."""
    suite = tmp / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "suite.yaml").write_text(SUITE)

    def both() -> None:
        assay.run(str(suite), agent=AGENT, trials=k, seed=3, store=store, run_id="careful")
        assay.run(
            str(suite),
            agent=AGENT,
            trials=k,
            seed=3,
            store=store,
            run_id="flaky",
            params={"skip_confirm": 0.5},
        )

    with ThreadPoolExecutor(1) as pool:
        pool.submit(both).result()
    return "careful", "flaky"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the viewer did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@dataclass(frozen=True)
class Probed:
    """A store with an LLM-backed run and probes made by ``assay probe`` (see
    :func:`probed_store`); ``ids`` names each probe by what it is."""

    path: Path
    store: Store
    run_id: str
    ids: dict[str, str]

    def doc(self, name: str) -> dict[str, Any]:
        from assay.store.probes import load_probe

        return load_probe(self.store, self.ids[name])


def _counting(request: dict[str, Any]) -> Any:
    """Answers exactly ``max_tokens`` words, as a model told to count."""
    from tests.support.fake_llm_server import Reply

    n = int(request.get("max_tokens") or 10)
    return Reply(text=" ".join(str(i) for i in range(1, n + 1)))


def _probe(path: Path, model: str, base_url: str, *args: str) -> str:
    import json

    from tests.support.cli import assay_main

    proc = assay_main(
        "probe",
        model,
        "-m",
        f"base_url={base_url}",
        "-m",
        "api_key=test",
        "--store",
        str(path),
        "--json",
        *args,
    )
    assert proc.code == 0, proc.stderr
    return str(json.loads(proc.stdout)["probe_id"])


#: The latency profile of the probed endpoint: TTFT 100 ms ± 10, 100 tokens/s.
PROBE_TTFT_S, PROBE_TOKENS_PER_S = 0.1, 100.0


def probed_store(tmp: Path) -> Probed:
    """A retail run ``llm`` whose agent and user are ``openai:scripted`` and whose judge is
    ``openai:scripted-judge`` (the scripted brain behind the fake server), a toy run
    ``careful`` that calls no model, and probes stored by ``assay probe`` against fake
    servers: ``scripted-old`` and ``scripted`` (latency, the second newer), ``ramp``
    (openai:scripted against 60 requests/minute), ``judge`` (availability, the third of 8
    checks answered 500) and ``other`` (openai:other, a model no run used). About 8 s."""
    from tests.support.fake_llm_server import FakeLLMServer, LatencyProfile
    from tests.support.scripted_brain import brain

    path = tmp / "probed.db"
    store = Store(path)
    pricing = tmp / "pricing.yaml"
    pricing.write_text("models:\n  scripted: {input: 3.0, output: 15.0}\n")

    def llm_run() -> None:
        with FakeLLMServer(brain) as srv:
            assay.run(
                "retail",
                agent="openai:scripted",
                user="openai:scripted",
                judges=["openai:scripted-judge"],
                trials=1,
                task_ids=["cancel-pending"],
                store=store,
                run_id="llm",
                model_options={"base_url": srv.openai_base_url, "api_key": "test", "pricing": str(pricing)},
                judge_options={"base_url": srv.openai_base_url, "api_key": "test"},
            )

    with ThreadPoolExecutor(1) as pool:
        pool.submit(llm_run).result()
    suite = tmp / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "suite.yaml").write_text(SUITE)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(
            lambda: assay.run(str(suite), agent=AGENT, trials=1, seed=3, store=store, run_id="careful")
        ).result()

    ids: dict[str, str] = {}
    latency = LatencyProfile(ttft_s=PROBE_TTFT_S, jitter_s=0.01, seed=1)
    with FakeLLMServer(_counting, latency=latency, tokens_per_s=PROBE_TOKENS_PER_S) as srv:
        url = srv.openai_base_url
        few = ("--requests", "6", "--max-tokens", "6")
        ids["scripted-old"] = _probe(path, "openai:scripted", url, *few)
        ids["scripted"] = _probe(path, "openai:scripted", url, *few)
        ids["other"] = _probe(path, "openai:other", url, "--requests", "3", "--max-tokens", "3")
        srv.schedule(None, None, "500")
        ids["judge"] = _probe(
            path, "openai:scripted-judge", url, "--mode", "availability", "--interval-s", "0.1",
            "--duration-s", "0.8", "--max-tokens", "3",
        )  # fmt: skip
    with FakeLLMServer(
        _counting,
        latency=latency,
        tokens_per_s=PROBE_TOKENS_PER_S,
        rate_limit_rpm=60,
        rate_limit_window_s=1.0,
    ) as srv:
        ids["ramp"] = _probe(
            path, "openai:scripted", srv.openai_base_url, "--mode", "ramp", "--step-s", "2",
            "--max-tokens", "5", "--max-requests", "20",
        )  # fmt: skip
    return Probed(path, store, "llm", ids)
