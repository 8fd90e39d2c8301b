"""assay's pytest plugin: evals written as tests (docs/pytest.md).

    def test_refunds(assay_run):
        run = assay_run("retail", agent="builtin:retail-careful", trials=4)
        assert run.pass_hat_k(4) >= 0.9
        assert run.gate("examples/gate.yaml")

Loaded by the ``pytest11`` entry point for every pytest session of an environment where
assay is installed, so this module imports nothing of assay at start: the run and gate
machinery (:mod:`.evals`) loads when a test first calls ``assay_run``.

Options: ``--assay-store`` (ini ``assay_store``, else ``$ASSAY_STORE``, else
``.assay/assay.db``) and ``--assay-suite NAME`` (repeatable: run only the evals of these
suites). Marker: ``@pytest.mark.assay(suite=..., **spec fields)``; ``-m assay`` selects
every eval (a test using ``assay_run`` is marked ``assay`` automatically).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .evals import EvalRun

STORE_ENV = "ASSAY_STORE"
_RUNS = pytest.StashKey[list[tuple[str, "EvalRun"]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "assay evals (docs/pytest.md)")
    group.addoption(
        "--assay-store",
        dest="assay_store",
        default=None,
        help="store of the runs evals make (default: ini assay_store, $ASSAY_STORE, .assay/assay.db)",
    )
    group.addoption(
        "--assay-suite",
        dest="assay_suites",
        action="append",
        default=[],
        metavar="NAME",
        help="run only the evals of this suite (repeatable); other tests are deselected",
    )
    parser.addini("assay_store", "store of the runs evals make (relative to the rootdir)", default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "assay(suite=None, **spec): an assay eval; suite and run-spec fields are defaults of assay_run "
        "(select with -m assay or --assay-suite NAME)",
    )
    config.stash[_RUNS] = []


def store_location(config: pytest.Config) -> str | None:
    """``--assay-store``, else the ini's ``assay_store`` (relative to the rootdir), else
    None: the store's own default (``$ASSAY_STORE``, else ``.assay/assay.db``)."""
    given = config.getoption("assay_store")
    if given:
        return str(given)
    ini = config.getini("assay_store")
    if ini:
        path = Path(str(ini))
        is_url = "://" in str(ini) or str(ini) == ":memory:"
        return str(ini) if is_url or path.is_absolute() else str(config.rootpath / path)
    return os.environ.get(STORE_ENV) or None


def suite_matches(suite: str, selected: list[str]) -> bool:
    """Whether ``suite`` (a built-in name, folder or ``suite.yaml`` path) is one of the
    ``--assay-suite`` names: the string as given, or the name of its folder."""
    path = Path(suite.rstrip("/"))
    names = {suite, str(path), path.name}
    if path.suffix in (".yaml", ".yml"):
        names.add(path.parent.name)
    return bool(names & {s.rstrip("/") for s in selected})


def _marker_suite(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("assay")
    if marker is None:
        return None
    suite = marker.kwargs.get("suite", marker.args[0] if marker.args else None)
    return None if suite is None else str(suite)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "assay_run" in getattr(item, "fixturenames", ()) and item.get_closest_marker("assay") is None:
            item.add_marker(pytest.mark.assay)
    selected = config.getoption("assay_suites")
    if not selected:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        if item.get_closest_marker("assay") is None:
            drop.append(item)
            continue
        suite = _marker_suite(item)
        (keep if suite is None or suite_matches(suite, selected) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def assay_run(request: pytest.FixtureRequest) -> Iterator[Callable[..., EvalRun]]:
    """``assay_run(suite=None, **spec fields)`` runs a suite like ``assay.run`` and returns
    an :class:`~assay.pytest_plugin.evals.EvalRun`; defaults come from the test's
    ``assay`` marker, the store from ``--assay-store`` / ini / ``$ASSAY_STORE``."""
    from .evals import EvalRunner

    runner = EvalRunner(request, store_location(request.config), request.config.getoption("assay_suites"))
    yield runner
    request.config.stash[_RUNS].extend((request.node.nodeid, r) for r in runner.runs)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    runs = config.stash.get(_RUNS, [])
    if not runs:
        return
    from .evals import summary_lines

    terminalreporter.write_sep("=", "assay evals")
    for line in summary_lines(runs):
        terminalreporter.write_line(line)
