from __future__ import annotations

import gc
import os
import sys

import pytest

# Cache compiled bytecode even where the environment says not to (this machine sets
# PYTHONDONTWRITEBYTECODE): without it every test module is assertion-rewritten again on
# every run and every `assay` subprocess compiles assay from source, about a third of a
# second each. The __pycache__ folders are git-ignored.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# ranx (the reference of tests/metrics/test_rag_metrics.py) compiles its metrics with numba
# on first use: 50+ s of one worker in a fresh virtual environment, for 200 small runs that
# take 0.2 s interpreted. The numbers are the same; the compile is not what is tested.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

from assay.envs import DOMAINS  # noqa: E402
from tests.toydomain import DOMAIN as TOY  # noqa: E402

DOMAINS.register("toy", TOY)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default addopts): one worker more than there are cores, so that the
    tests that wait (on a Retry-After, a server, a subprocess) leave no core idle."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is alive after collection (modules, test items) lives to the end: move it out of
    the collector's sight, so the full collections the tests trigger do not walk it again."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    """Every test gets its own default store, so nothing lands in the checkout."""
    monkeypatch.setenv("ASSAY_STORE", str(tmp_path / "assay.db"))
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With ``ASSAY_NO_SKIPS=1`` (CI sets it) a skipped test fails: a missing part of the
    machine (bubblewrap, Chromium, an extra) must not pass silently."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("ASSAY_NO_SKIPS") == "1" and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.longrepr = f"skipped in CI (ASSAY_NO_SKIPS=1): {reason}"
