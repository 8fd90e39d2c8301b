"""``assay view`` as a user starts it: a real process listening on 127.0.0.1 (a subprocess,
as the server runs until it is stopped); its refusals to start run in process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.server.support import free_port
from tests.support.cli import assay_main

pytest.importorskip("uvicorn")
ROOT = Path(__file__).parents[2]


def test_assay_view_serves_the_store_on_loopback(tmp_path: Path) -> None:
    from assay.store import Store
    from tests.server.synth import synth_run

    db = tmp_path / "v.db"
    synth_run(Store(db), "one", tasks=3, k=2)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "view", "--store", str(db), "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        body = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as resp:
                    body = resp.read().decode()
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.2)
        assert 'href="/runs/one"' in body, proc.stderr.read() if proc.poll() is not None else "no answer"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_assay_view_refuses_a_bad_port() -> None:
    proc = assay_main("view", "--port", "70000", cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_assay_view_says_when_the_port_is_taken() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = assay_main("view", "--port", str(port), cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "cannot listen on 127.0.0.1" in proc.stderr and "Traceback" not in proc.stderr
