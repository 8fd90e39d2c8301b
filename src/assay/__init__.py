"""assay: an evaluation harness for AI agents and LLM applications.

>>> import assay
>>> suite = assay.load_suite("retail")
>>> run = assay.run(suite, agent="builtin:retail-careful", trials=4)   # doctest: +SKIP
>>> run.summary().overall.pass_hat_k                                     # doctest: +SKIP

The names below load on first use: ``import assay`` (and so every ``assay.*`` module,
the pytest plugin included) stays cheap until something is actually run.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.spec import RunSpec
    from .errors import AssayError, SuiteError
    from .runner import Run, resume, resume_async, run, run_async
    from .suites import load_suite

__version__ = "0.1.0"

_LAZY = {
    "RunSpec": ".core.spec",
    "AssayError": ".errors",
    "SuiteError": ".errors",
    "Run": ".runner",
    "resume": ".runner",
    "resume_async": ".runner",
    "run": ".runner",
    "run_async": ".runner",
    "load_suite": ".suites",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


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
