"""Helpers for viewer, report and browser tests: small real runs of the toy domain, and
the viewer served over real HTTP on 127.0.0.1 in a background thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
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
