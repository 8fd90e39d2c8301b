"""A real Arize Phoenix server for tests: ``phoenix serve`` on 127.0.0.1, free ports, a
temporary working directory, bounded startup, killed on exit.

The server comes from the ``arize-phoenix`` package, installed apart from assay's
environment (it pins ``anthropic<2``): ``scripts/install-phoenix.sh`` makes
``.phoenix-venv``; ``$ASSAY_PHOENIX`` names the ``phoenix`` executable to use (CI sets it).

    with PhoenixServer(tmp_path) as px:
        px.url            # http://127.0.0.1:PORT (OTLP/HTTP at PORT/v1/traces too)
        px.client()       # phoenix.client.Client
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]


def phoenix_executable() -> str | None:
    """``$ASSAY_PHOENIX``, else ``.phoenix-venv/bin/phoenix`` of the repository, else
    ``phoenix`` on the PATH."""
    named = os.environ.get("ASSAY_PHOENIX")
    if named:
        return named
    local = ROOT / ".phoenix-venv" / "bin" / "phoenix"
    if local.exists():
        return str(local)
    return shutil.which("phoenix")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PhoenixError(RuntimeError):
    pass


class PhoenixServer:
    def __init__(self, workdir: Path, *, startup_timeout_s: float = 300.0, executable: str | None = None):
        self.workdir = Path(workdir)
        self.timeout = startup_timeout_s
        self.executable = executable or phoenix_executable()
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = self.workdir / "phoenix.log"
        self.startup_s = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> Any:
        from phoenix.client import Client

        return Client(base_url=self.url)

    def __enter__(self) -> PhoenixServer:
        if not self.executable:
            raise PhoenixError("no phoenix executable: run scripts/install-phoenix.sh or set ASSAY_PHOENIX")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(self.workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        }
        env.pop("PHOENIX_COLLECTOR_ENDPOINT", None)
        env.pop("PHOENIX_SQL_DATABASE_URL", None)
        started = time.monotonic()
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [self.executable, "serve"],
                env=env,
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stopped whole on exit
            )
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - started
        return self

    def _wait_ready(self, started: float) -> None:
        assert self.proc is not None
        while time.monotonic() - started < self.timeout:
            if self.proc.poll() is not None:
                raise PhoenixError(f"phoenix exited with {self.proc.returncode}:\n{self.tail()}")
            with contextlib.suppress(OSError), urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return
            time.sleep(0.5)
        raise PhoenixError(f"phoenix was not ready after {self.timeout:.0f} s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def spans(self, project: str, expected: int, timeout_s: float = 60.0) -> list[dict[str, Any]]:
        """The project's spans, once ``expected`` of them are stored (bounded wait)."""
        client = self.client()
        deadline = time.monotonic() + timeout_s
        found: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            try:
                found = list(client.spans.get_spans(project_identifier=project, limit=expected + 1000))
            except Exception:  # the project appears with its first span
                found = []
            if len(found) >= expected:
                return found
            time.sleep(0.5)
        raise PhoenixError(f"phoenix holds {len(found)} spans of project {project!r}, expected {expected}")
