"""assay: an evaluation harness for AI agents and LLM applications.

>>> import assay
>>> suite = assay.load_suite("retail")
>>> run = assay.run(suite, agent="builtin:retail-careful", trials=4)   # doctest: +SKIP
>>> run.summary().overall.pass_hat_k                                     # doctest: +SKIP

The public names are imported on first use, so that ``import assay`` (and the command
line's ``--help``) stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_PUBLIC = {
    "AssayError": "assay.errors",
    "SuiteError": "assay.errors",
    "RunSpec": "assay.core.spec",
    "Run": "assay.runner.stored",
    "run": "assay.runner.api",
    "run_async": "assay.runner.api",
    "resume": "assay.runner.api",
    "resume_async": "assay.runner.api",
    "load_suite": "assay.suites.loader",
}

__all__ = [
    "AssayError",
    "Run",
    "RunSpec",
    "SuiteError",
    "__version__",
    "load_suite",
    "resume",
    "resume_async",
    "run",
    "run_async",
]

if TYPE_CHECKING:
    from .core.spec import RunSpec
    from .errors import AssayError, SuiteError
    from .runner.api import resume, resume_async, run, run_async
    from .runner.stored import Run
    from .suites.loader import load_suite


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
