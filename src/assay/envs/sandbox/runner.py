"""Running one command in a sandbox: :class:`Sandbox` and the opt-in to unsafe execution.

A command runs under bubblewrap (see :mod:`.bwrap` for what it can see) through a small
launcher that sets the rlimits of :class:`~.limits.SandboxLimits`, drops root (when
assay runs as root it switches to a fresh unprivileged uid per command, so the process
limit counts only that command's processes), starts the command and reports how it
ended. A wall-clock timeout kills the whole sandbox. Output is read as it comes and
kept up to a cap per stream.

Where bubblewrap is missing or cannot start, :meth:`Sandbox.run` raises
:class:`SandboxUnavailable` (a :class:`~assay.errors.HarnessError`: the harness, never
the agent, is at fault) unless the user opted in to unsafe execution (``unsafe=True``,
or the environment variable ``ASSAY_UNSAFE_NO_SANDBOX=1``, which the
``--unsafe-no-sandbox`` option sets); then the command runs on the host, in its
workspace, with the same rlimits, timeout and output caps but no isolation at all (and,
run by root, no process limit: root is exempt from RLIMIT_NPROC).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal

from ...errors import HarnessError
from .bwrap import HELPERS, bwrap_argv, find_bwrap, probe
from .helpers import LAUNCHER, PYTEST_PLUGIN
from .limits import SandboxLimits, SandboxResult, guess_limit, signal_name

log = logging.getLogger(__name__)

#: Set to ``1`` to allow running untrusted code without a sandbox where none can start.
UNSAFE_ENV = "ASSAY_UNSAFE_NO_SANDBOX"
#: Extra host folders made visible (read-only) inside sandboxes, ``:``-separated.
RO_PATHS_ENV = "ASSAY_SANDBOX_RO_PATHS"

Mode = Literal["bwrap", "unsafe"]
_UID_BASE = 0x20000
_uid_counter = itertools.count()
_warned = False


class SandboxUnavailable(HarnessError):
    """No sandbox can run here (or one failed to start): a harness failure."""

    root_cause = "HARNESS"


def unsafe_opted_in(explicit: bool | None = None) -> bool:
    """Whether running untrusted code without a sandbox is allowed: ``explicit`` when
    given, else the environment variable :data:`UNSAFE_ENV` set to ``1``."""
    if explicit is not None:
        return explicit
    return os.environ.get(UNSAFE_ENV, "").strip() == "1"


def _next_uid() -> int:
    """A uid no other running sandbox of this machine is likely to use."""
    return _UID_BASE + (os.getpid() % 4096) * 256 + next(_uid_counter) % 256


def _chown_tree(root: Path, uid: int) -> None:
    """Give the workspace to the sandbox's uid; never follows a symbolic link."""
    os.chown(root, uid, uid)
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


class _Capped:
    """Keeps the first and last ``cap / 2`` bytes of a stream and counts the rest."""

    def __init__(self, cap: int):
        self.half = cap // 2
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail and self.tail_size - len(self.tail[0]) >= self.half:
                self.tail_size -= len(self.tail.popleft())

    def text(self) -> tuple[str, bool]:
        tail = b"".join(self.tail)[-self.half :] if self.tail else b""
        omitted = self.total - len(self.head) - len(tail)
        body = bytes(self.head)
        if omitted > 0:
            body += f"\n[... {omitted} bytes of output omitted ...]\n".encode()
        body += tail
        return body.decode("utf-8", errors="replace"), omitted > 0


def _drain(stream: IO[bytes], sink: _Capped) -> None:
    with stream:
        for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
            sink.add(chunk)


class Sandbox:
    """Runs commands in a workspace folder, isolated, within :class:`SandboxLimits`.

    >>> result = Sandbox().run(["python", "-c", "print(1 + 1)"], workspace)
    >>> result.exit_code, result.stdout
    (0, '2\\n')

    ``unsafe``: allow running without isolation where no sandbox can start (None: the
    environment variable ``ASSAY_UNSAFE_NO_SANDBOX``). ``ro_paths``: extra host folders
    visible read-only inside (default: ``ASSAY_SANDBOX_RO_PATHS``).
    """

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        *,
        unsafe: bool | None = None,
        ro_paths: Sequence[str] | None = None,
    ):
        self.limits = limits or SandboxLimits()
        self.unsafe = unsafe_opted_in(unsafe)
        if ro_paths is None:
            ro_paths = [p for p in os.environ.get(RO_PATHS_ENV, "").split(":") if p]
        self.ro_paths = list(ro_paths)
        self._bwrap = find_bwrap()

    @property
    def as_root(self) -> bool:
        return os.geteuid() == 0

    def mode(self) -> Mode:
        """``bwrap`` when bubblewrap works here, ``unsafe`` when it does not and the user
        opted in; raise :class:`SandboxUnavailable` otherwise."""
        problem = probe(self._bwrap, not self.as_root)
        if problem is None:
            return "bwrap"
        if self.unsafe:
            global _warned
            if not _warned:
                log.warning("%s: running untrusted code WITHOUT a sandbox (%s=1)", problem, UNSAFE_ENV)
                _warned = True
            return "unsafe"
        fix = "install it (apt-get install bubblewrap)" if self._bwrap is None else "fix that"
        raise SandboxUnavailable(
            f"{problem}, and assay refuses to run untrusted code without a sandbox: {fix} "
            f"or opt in with --unsafe-no-sandbox ({UNSAFE_ENV}=1)"
        )

    def check(self) -> Mode:
        """Same as :meth:`mode`: call it before a run to fail early."""
        return self.mode()

    def helper_path(self, mode: Mode) -> str:
        """Where the helper files (launcher, pytest plugin) are, seen from the command."""
        return HELPERS if mode == "bwrap" else str(LAUNCHER.parent)

    def run(
        self,
        command: Sequence[str] | str,
        workspace: Path | str,
        *,
        stdin: bytes | str | None = None,
        env: Mapping[str, str] | None = None,
        limits: SandboxLimits | None = None,
        helpers_on_path: bool = False,
    ) -> SandboxResult:
        """Run ``command`` (argv, or a shell command line) with ``workspace`` as its
        working directory (``/workspace`` inside). ``env`` adds variables to the clean
        environment; ``helpers_on_path`` puts the pytest plugin on ``PYTHONPATH``."""
        limits = limits or self.limits
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("empty command")
        root = Path(workspace).resolve()
        mode = self.mode()
        # as root, the sandboxed command runs as a fresh unprivileged uid; unsafe, as is
        uid = _next_uid() if self.as_root and mode == "bwrap" else None
        if uid is not None:
            try:
                _chown_tree(root, uid)
            except OSError:
                uid = 65534
                _chown_tree(root, uid)
        home = None if mode == "bwrap" else Path(tempfile.mkdtemp(prefix="assay-home-"))
        environment = self._environment(mode, home, env, helpers_on_path)
        status_r, status_w = os.pipe()
        config = {"status_fd": status_w, "rlimits": limits.rlimits(), "uid": uid, "gid": uid}
        if mode == "bwrap":
            helpers = {LAUNCHER.name: LAUNCHER, PYTEST_PLUGIN.name: PYTEST_PLUGIN}
            prefix = bwrap_argv(
                str(self._bwrap),
                root,
                helpers,
                environment,
                self.ro_paths,
                tmp_bytes=limits.tmp_mb << 20,
                drop_user=uid is None,
            )
            launcher, popen_env, cwd = f"{HELPERS}/{LAUNCHER.name}", None, None
        else:
            prefix, launcher, popen_env, cwd = [], str(LAUNCHER), dict(environment), str(root)
        full = [*prefix, sys.executable, "-I", "-S", launcher, json.dumps(config), *argv]
        try:
            return self._execute(full, stdin, limits, (status_r, status_w), popen_env, cwd, mode)
        finally:
            if home is not None:
                shutil.rmtree(home, ignore_errors=True)

    async def arun(self, command: Sequence[str] | str, workspace: Path | str, **kw: Any) -> SandboxResult:
        """:meth:`run` in a worker thread, so the event loop keeps going."""
        return await asyncio.to_thread(self.run, command, workspace, **kw)

    # internals ----------------------------------------------------------------------
    def _environment(
        self, mode: Mode, home: Path | None, extra: Mapping[str, str] | None, helpers_on_path: bool
    ) -> dict[str, str]:
        tmp = "/tmp" if home is None else str(home)
        environment = {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": tmp,
            "TMPDIR": tmp,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "USER": "sandbox",
            "LOGNAME": "sandbox",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            # one thread per numeric library: thread pools sized to the host's cores would
            # hit the process limit (threads count) on a big machine
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            # the harness's own pytest plugins (assay's included: its venv is the Python the
            # sandbox runs) stay out of the agent's test runs
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        if helpers_on_path:
            environment["PYTHONPATH"] = self.helper_path(mode)
        environment.update(extra or {})
        return environment

    def _execute(
        self,
        argv: list[str],
        stdin: bytes | str | None,
        limits: SandboxLimits,
        status: tuple[int, int],
        env: dict[str, str] | None,
        cwd: str | None,
        mode: Mode,
    ) -> SandboxResult:
        status_r, status_w = status
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(status_w,),
                start_new_session=True,
                env=env,
                cwd=cwd,
            )
        except OSError as exc:
            os.close(status_r)
            raise SandboxUnavailable(f"the sandbox could not be started: {exc}") from exc
        finally:
            os.close(status_w)
        out, err, report = _Capped(limits.output_bytes), _Capped(limits.output_bytes), bytearray()
        threads = [
            threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True),
            threading.Thread(target=_read_status, args=(status_r, report), daemon=True),
        ]
        if stdin is not None:
            data = stdin.encode() if isinstance(stdin, str) else stdin
            threads.append(threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True))
        for t in threads:
            t.start()
        timed_out = False
        try:
            proc.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc.pid)  # the sandbox and, unsafe, whatever the command left behind
            proc.wait()
        duration = time.monotonic() - started
        for t in threads:
            t.join(timeout=10)
        stdout, out_cut = out.text()
        stderr, err_cut = err.text()
        said = report.decode(errors="replace").split()
        exit_code, sig = _how_it_ended(said, proc, stderr, timed_out, limits)
        limit = "timeout" if timed_out else guess_limit(sig, exit_code, stderr)
        return SandboxResult(
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            duration_s=duration,
            timed_out=timed_out,
            signal=sig,
            limit=limit,
            stdout_truncated=out_cut,
            stderr_truncated=err_cut,
            sandboxed=mode == "bwrap",
        )


def _read_status(fd: int, into: bytearray) -> None:
    with os.fdopen(fd, "rb") as fh:
        for chunk in iter(lambda: fh.read(4096), b""):
            into += chunk


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    if stream is None:
        return
    try:
        with stream:
            stream.write(data)
    except (BrokenPipeError, OSError):
        pass  # the command stopped reading: its business


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _how_it_ended(
    lines: list[str], proc: subprocess.Popen[bytes], stderr: str, timed_out: bool, limits: SandboxLimits
) -> tuple[int | None, str | None]:
    """(exit code, signal) of the command, read from the sandbox's status report; a
    sandbox that never reported the command started is :class:`SandboxUnavailable`."""
    if "started" not in lines:
        if timed_out:
            raise SandboxUnavailable(f"the sandbox did not start within {limits.timeout_s:g} s")
        reason = (stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        raise SandboxUnavailable(f"the sandbox could not start the command ({reason})")
    exit_code: int | None = proc.returncode
    sig: str | None = None
    if "status" in lines and lines.index("status") + 1 < len(lines):
        raw = int(lines[lines.index("status") + 1])
        if os.WIFSIGNALED(raw):
            exit_code, sig = None, signal_name(os.WTERMSIG(raw))
        else:
            exit_code = os.WEXITSTATUS(raw)
    if timed_out:
        exit_code, sig = None, sig or "SIGKILL"
    return exit_code, sig
