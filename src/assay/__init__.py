"""assay: an evaluation harness for AI agents and LLM applications.

>>> import assay
>>> suite = assay.load_suite("retail")
>>> run = assay.run(suite, agent="builtin:retail-careful", trials=4)   # doctest: +SKIP
>>> run.summary().overall.pass_hat_k                                     # doctest: +SKIP
"""

from .core.spec import RunSpec
from .errors import AssayError, SuiteError
from .runner import Run, resume, resume_async, run, run_async
from .suites import load_suite

__version__ = "0.1.0"

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
