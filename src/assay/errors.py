"""Errors a user can cause.

Every user-facing mistake raises an :class:`AssayError` subclass whose message is one
sentence that names the file, line and field where possible. The CLI prints that
sentence and exits with :attr:`AssayError.exit_code` (2), never a traceback.
"""

from __future__ import annotations

from .core.problem import Problem

__all__ = [
    "AssayError",
    "HarnessError",
    "Problem",
    "RecordError",
    "ResumeError",
    "RunNotFound",
    "SpecError",
    "StoreError",
    "SuiteError",
]


class AssayError(Exception):
    """Base class of errors caused by user input or usage (exit code 2)."""

    exit_code = 2


class SuiteError(AssayError):
    """A suite (or task file) failed to load or validate; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class SpecError(AssayError):
    """An agent, user, model or store spec string could not be resolved."""


class RunNotFound(AssayError):
    """A run id that is not in the store."""


class ResumeError(AssayError):
    """A run cannot be resumed as asked (different suite version, finished, ...)."""


class StoreError(AssayError):
    """A store that cannot be used as asked (written by a newer assay, unreadable...)."""


class RecordError(AssayError):
    """A portable run record (``assay export`` / ``assay import run``) that cannot be read."""


class HarnessError(Exception):
    """A failure of the harness itself (exit code 3): never the agent's fault."""

    exit_code = 3
