"""What a sandboxed command may use, and how it ended."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: The limit a failure points to (best effort: see :attr:`SandboxResult.limit`).
LimitName = Literal["timeout", "cpu", "memory", "processes", "file_size", "output"]


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed command.

    Everything but ``timeout_s`` and the output caps is an rlimit set inside the
    sandbox before the command starts (so it binds the command and every process it
    starts): ``cpu_s`` (RLIMIT_CPU: SIGXCPU, then SIGKILL one second later),
    ``memory_mb`` (RLIMIT_AS: allocations fail, Python raises MemoryError),
    ``processes`` (RLIMIT_NPROC, threads included: fork fails with EAGAIN),
    ``file_size_mb`` (RLIMIT_FSIZE: writes past it fail with EFBIG) and
    ``open_files`` (RLIMIT_NOFILE). ``timeout_s`` is wall-clock time, after which the
    whole sandbox (every process in it) is killed. ``tmp_mb`` sizes the private /tmp.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(60.0, gt=0, le=3600)
    cpu_s: int | None = Field(None, ge=1, description="default: timeout_s rounded up")
    memory_mb: int = Field(2048, ge=32)
    processes: int = Field(64, ge=4)
    file_size_mb: int = Field(64, ge=1)
    open_files: int = Field(512, ge=16)
    output_bytes: int = Field(64_000, ge=1_000, description="kept per stream (head and tail)")
    tmp_mb: int = Field(256, ge=1)

    def merged(self, **override: Any) -> SandboxLimits:
        """These limits with some fields replaced (``None`` values are ignored)."""
        changes = {k: v for k, v in override.items() if v is not None}
        return self.model_copy(update=changes) if changes else self

    def rlimits(self) -> dict[str, tuple[int, int]]:
        """rlimit name -> (soft, hard), as the launcher sets them."""
        cpu = self.cpu_s if self.cpu_s is not None else max(1, int(self.timeout_s + 0.999))
        mb = 1 << 20
        return {
            "RLIMIT_CPU": (cpu, cpu + 1),
            "RLIMIT_AS": (self.memory_mb * mb, self.memory_mb * mb),
            "RLIMIT_NPROC": (self.processes, self.processes),
            "RLIMIT_FSIZE": (self.file_size_mb * mb, self.file_size_mb * mb),
            "RLIMIT_NOFILE": (self.open_files, self.open_files),
            "RLIMIT_CORE": (0, 0),
        }


@dataclass(slots=True)
class SandboxResult:
    """How a sandboxed command ended.

    ``exit_code`` is the command's exit status (None when a signal killed it, then
    ``signal`` names it, e.g. ``SIGKILL``). ``timed_out`` means the wall-clock limit
    was reached and the sandbox was killed. ``limit`` names the limit the failure points
    to, when one does: ``timeout``; ``cpu`` (SIGXCPU); ``file_size`` (SIGXFSZ or
    "File too large"); ``memory`` (MemoryError, "Cannot allocate memory", bad_alloc);
    ``processes`` (fork failing with EAGAIN); from signals it is exact, from the error
    text a best guess. Output beyond :attr:`SandboxLimits.output_bytes` per stream is
    cut from the middle, with a note saying how much.
    """

    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    signal: str | None = None
    limit: LimitName | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    sandboxed: bool = True

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def summary(self) -> str:
        """One line: how the command ended."""
        if self.timed_out:
            head = f"timed out after {self.duration_s:.1f} s (every process of the sandbox was killed)"
        elif self.signal is not None:
            head = f"killed by {self.signal}"
        else:
            head = f"exit code {self.exit_code}"
        if self.limit is not None and self.limit != "timeout":
            head += f"; it hit the {self.limit.replace('_', ' ')} limit"
        return head

    def render(self) -> str:
        """The result as the text an agent reads from a tool."""
        parts = [self.summary()]
        if self.stdout:
            parts.append("--- stdout ---\n" + self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("--- stderr ---\n" + self.stderr.rstrip("\n"))
        return "\n".join(parts)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


_TEXT_HINTS: tuple[tuple[LimitName, tuple[str, ...]], ...] = (
    ("memory", ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")),
    ("file_size", ("File too large",)),
    ("processes", ("Resource temporarily unavailable", "BlockingIOError: [Errno 11]")),
)
_SIGNAL_LIMITS: dict[str, LimitName] = {"SIGXCPU": "cpu", "SIGXFSZ": "file_size"}


def guess_limit(signal_: str | None, exit_code: int | None, stderr: str) -> LimitName | None:
    """The limit a failed command points to: exact from a signal, else from its text."""
    if signal_ in _SIGNAL_LIMITS:
        return _SIGNAL_LIMITS[signal_]
    if exit_code == 0:
        return None
    for name, needles in _TEXT_HINTS:
        if any(n in stderr for n in needles):
            return name
    return None
