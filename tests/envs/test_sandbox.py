"""The bubblewrap sandbox: isolation, limits, timeouts, output caps, the unsafe opt-in.

Each test runs real commands in a real sandbox (bubblewrap must be installed: .ci/run
installs it); nothing here is mocked but the absence of bubblewrap."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from assay.envs.sandbox import Sandbox, SandboxLimits, SandboxUnavailable, bwrap, runner
from assay.envs.sandbox.bwrap import find_bwrap, probe, python_roots
from assay.errors import HarnessError

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")

FAST = SandboxLimits(timeout_s=10, processes=32, memory_mb=512)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def py(code: str) -> list[str]:
    return ["python", "-c", code]


def test_runs_a_command_in_its_workspace(ws: Path) -> None:
    (ws / "data.txt").write_text("42\n")
    result = Sandbox(FAST).run(py("import os; print(os.getcwd(), open('data.txt').read().strip())"), ws)
    assert result.ok and result.sandboxed
    assert result.stdout == "/workspace 42\n"
    assert result.exit_code == 0 and result.signal is None and not result.timed_out
    assert 0 < result.duration_s < 10
    written = Sandbox(FAST).run("echo made > new.txt", ws)
    assert written.ok and (ws / "new.txt").read_text() == "made\n"


def test_exit_code_and_signal_are_told_apart(ws: Path) -> None:
    sandbox = Sandbox(FAST)
    exited = sandbox.run(py("raise SystemExit(137)"), ws)
    assert (exited.exit_code, exited.signal) == (137, None)
    killed = sandbox.run(py("import os, signal; os.kill(os.getpid(), signal.SIGKILL)"), ws)
    assert (killed.exit_code, killed.signal) == (None, "SIGKILL")
    assert killed.summary() == "killed by SIGKILL"
    missing = sandbox.run(["no-such-program"], ws)
    assert missing.exit_code == 127 and "cannot run" in missing.stderr


def test_a_private_writable_tmp(ws: Path) -> None:
    code = (
        "import multiprocessing, os, tempfile\nmultiprocessing.Lock()  # needs /dev/shm\n"
        "print(tempfile.mkstemp()[1].startswith('/tmp/'), os.environ['HOME'])"
    )
    result = Sandbox(FAST).run(py(code), ws)
    assert result.stdout == "True /tmp\n", result.stderr
    (ws / "test_tmp.py").write_text("def test_tmp(tmp_path):\n    (tmp_path / 'f').write_text('x')\n")
    tested = Sandbox(FAST).run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tmp.py"], ws)
    assert tested.ok, tested.stdout + tested.stderr


def test_stdin_is_passed(ws: Path) -> None:
    result = Sandbox(FAST).run(py("import sys; print(sys.stdin.read().upper())"), ws, stdin="hello")
    assert result.stdout == "HELLO\n"


def test_no_network_not_even_the_hosts_loopback(ws: Path) -> None:
    """The sandbox has its own loopback: a server of the host on 127.0.0.1 is out of reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)  # a connection would wait in the backlog, accepted or not
    port = server.getsockname()[1]
    code = (
        "import socket\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "    print('REACHED')\nexcept OSError as e:\n    print('blocked:', e)\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('REACHED')\n"
        "except OSError as e:\n    print('blocked:', e)\n"
    )
    result = Sandbox(FAST).run(py(code), ws)
    server.setblocking(False)
    with pytest.raises(BlockingIOError):
        server.accept()  # nothing arrived
    server.close()
    assert result.ok, result.stderr
    assert "REACHED" not in result.stdout and result.stdout.count("blocked:") == 2


def test_system_is_read_only_and_the_host_is_not_visible(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN")
    outside = tmp_path / "outside.txt"
    code = f"""
import os
for path in ["/usr/evil.txt", "/etc/evil.txt", {str(outside)!r}, "../outside.txt", "/outside.txt"]:
    try:
        open(path, "w").write("x")
        print("WROTE", path)
    except OSError as e:
        print("denied", path, type(e).__name__)
for path in [{str(secret)!r}, "/etc/shadow", "/etc/passwd", {str(Path.home() / ".bashrc")!r}]:
    print("exists" if os.path.exists(path) else "absent", path)
print("TOP", " ".join(sorted(os.listdir("/"))))
"""
    result = Sandbox(FAST).run(py(code), ws)
    assert result.ok, result.stderr
    assert "TOP-SECRET-TOKEN" not in result.stdout
    for path in ("/usr/evil.txt", "/etc/evil.txt", str(outside)):
        assert f"denied {path}" in result.stdout
    for path in (str(secret), "/etc/shadow", "/etc/passwd", str(Path.home() / ".bashrc")):
        assert f"absent {path}" in result.stdout
    assert not outside.exists() and not (tmp_path / "outside.txt").exists()
    assert not Path("/usr/evil.txt").exists()
    top = set(result.stdout.split("TOP ")[1].split())
    interpreter = {Path(root).parts[1] for root in python_roots()}  # where Python lives
    system = {".assay", "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr"}
    assert top <= system | interpreter | {"workspace"}, top


def test_a_fork_bomb_is_contained(ws: Path) -> None:
    limits = SandboxLimits(timeout_s=3, processes=16, memory_mb=256)
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    started = time.monotonic()
    result = Sandbox(limits).run(py(code), ws)
    assert time.monotonic() - started < 10
    assert result.timed_out and result.limit == "timeout" and result.exit_code is None
    time.sleep(0.2)
    assert _processes_running("while True") == []


def test_background_processes_die_with_the_sandbox(ws: Path) -> None:
    token = f"sleep-{os.getpid()}-{time.monotonic_ns()}"
    script = ws / "bg.sh"
    script.write_text(f"exec -a {token} sleep 300 &\nsleep 300\n")
    result = Sandbox(SandboxLimits(timeout_s=1)).run(["bash", "bg.sh"], ws)
    assert result.timed_out
    time.sleep(0.2)
    assert _processes_running(token) == []


def test_memory_cpu_and_file_size_limits(ws: Path) -> None:
    memory = Sandbox(FAST).run(py("x = bytearray(2 << 30)"), ws)
    assert memory.exit_code == 1 and memory.limit == "memory" and "MemoryError" in memory.stderr
    cpu = Sandbox(SandboxLimits(timeout_s=20, cpu_s=1)).run(py("while True: pass"), ws)
    assert not cpu.timed_out and cpu.signal in ("SIGXCPU", "SIGKILL") and cpu.duration_s < 15
    assert cpu.signal != "SIGXCPU" or cpu.limit == "cpu"
    big = Sandbox(SandboxLimits(file_size_mb=1)).run(py("open('big', 'wb').write(b'x' * (3 << 20))"), ws)
    assert big.exit_code == 1 and big.limit == "file_size"
    assert (ws / "big").stat().st_size <= 1 << 20


def test_output_is_capped_from_the_middle(ws: Path) -> None:
    code = "print('FIRST'); [print('x' * 99) for _ in range(100_000)]; print('LAST')"
    result = Sandbox(SandboxLimits(output_bytes=4000)).run(py(code), ws)
    assert result.ok and result.stdout_truncated
    assert result.stdout.startswith("FIRST") and result.stdout.rstrip().endswith("LAST")
    assert "bytes of output omitted" in result.stdout and len(result.stdout) < 5000


def test_refuses_without_bubblewrap_unless_opted_in(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "find_bwrap", lambda: None)
    monkeypatch.delenv(runner.UNSAFE_ENV, raising=False)
    with pytest.raises(SandboxUnavailable) as caught:
        Sandbox(FAST).run(py("print(1)"), ws)
    assert isinstance(caught.value, HarnessError)
    message = str(caught.value)
    assert "bubblewrap (bwrap) is not installed" in message and "--unsafe-no-sandbox" in message
    assert "\n" not in message
    monkeypatch.setenv(runner.UNSAFE_ENV, "1")
    unsafe = Sandbox(FAST).run(py("import os; print(os.getcwd())"), ws)
    assert unsafe.ok and not unsafe.sandboxed and unsafe.stdout.strip() == str(ws.resolve())
    explicit = Sandbox(FAST, unsafe=False)
    with pytest.raises(SandboxUnavailable):
        explicit.run(py("print(1)"), ws)
    timed = Sandbox(SandboxLimits(timeout_s=1), unsafe=True).run(py("while True: pass"), ws)
    assert timed.timed_out


def test_a_sandbox_that_cannot_start_is_a_harness_error(ws: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    assert "Operation not permitted" in (probe(str(fake), False) or "")
    sandbox = Sandbox(FAST, unsafe=False)
    sandbox._bwrap = str(fake)
    with pytest.raises(SandboxUnavailable, match="cannot create a sandbox here"):
        sandbox.run(py("print(1)"), ws)


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the sandbox drops to an unprivileged uid")
def test_a_python_others_cannot_read_is_told_not_blamed_on_the_code(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A virtual environment made in ``mktemp -d`` (mode 0700): the sandbox's unprivileged
    user could not start Python, and every test of the agent's code failed as if the
    code were wrong. The sandbox is unavailable instead, saying why, in one sentence."""
    closed = tmp_path / "venv"
    closed.mkdir(mode=0o700)
    monkeypatch.setattr(bwrap, "python_roots", lambda: [str(closed)])
    bwrap.probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable) as caught:
            Sandbox(FAST, unsafe=False).run(py("print(1)"), ws)
    finally:
        bwrap.probe.cache_clear()
    message = str(caught.value)
    assert f"cannot enter {closed} (mode 700)" in message and f"chmod o+rx {closed}" in message
    assert "apt-get" not in message and "\n" not in message
    closed.chmod(0o755)
    assert bwrap.closed_python_root() is None


def _processes_running(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline and "pytest" not in cmdline:
            found.append(int(entry.name))
    return found


def test_extra_read_only_folders(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("shared data")
    code = f"print(open({str(shared / 'data.txt')!r}).read())\nopen({str(shared / 'new.txt')!r}, 'w')"
    monkeypatch.setenv(runner.RO_PATHS_ENV, str(shared))
    result = Sandbox(FAST).run(py(code), ws)
    assert result.stdout == "shared data\n" and "Read-only file system" in result.stderr
    assert not (shared / "new.txt").exists()
    hidden = Sandbox(FAST, ro_paths=[]).run(py(code), ws)
    assert "FileNotFoundError" in hidden.stderr
