"""Run ids are printed, stored and used in the viewer's URLs: a new run's id (given with
``--run-id``, ``run_id=`` or a spec file) must be letters, digits and ``_ . : -``; a
generated id stays within that rule whatever the suite is called; a run stored before
the rule, under another id, still loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli import assay_main

import assay
from assay.core.spec import SAFE_RUN_ID, RunSpec, run_id_problem
from assay.errors import SpecError
from assay.runner.provenance import new_run_id
from assay.store import Store

BAD = ["a/b", "../x", "<b>x</b>", "", "r$\\q$", "-leading-dash", "with space", "x" * 129, "new\nline"]
GOOD = ["careful", "tau2-telecom-20261203-032119-189014", "v1.2:arm_a", "_x", "x" * 128]


@pytest.mark.parametrize("run_id", BAD)
def test_unsafe_run_ids_are_refused(run_id: str) -> None:
    problem = run_id_problem(run_id)
    assert problem is not None and "use letters, digits and _ . : -" in problem


def test_latest_is_reserved() -> None:
    """``show latest`` shows the newest run: a run called latest could never be named."""
    problem = run_id_problem("latest")
    assert problem is not None and "names the newest run" in problem
    assert run_id_problem("latest-1") is None


@pytest.mark.parametrize("run_id", GOOD)
def test_safe_run_ids_are_taken(run_id: str) -> None:
    assert run_id_problem(run_id) is None


def test_the_cli_says_which_option_and_writes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    result = assay_main("run", "retail", "-k", "1", "--run-id", "../x", "--store", str(store))
    assert result.code == 2
    assert "run id '../x': use letters, digits and _ . : -" in result.err
    assert "Traceback" not in result.stderr
    assert not store.exists() or Store(str(store)).list_runs() == []


def test_the_api_raises_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="run id 'a/b'"):
        assay.run("retail", run_id="a/b", trials=1, store=str(tmp_path / "s.db"))


@pytest.mark.parametrize("suite_name", ["retail", "my suite/v2", "<b>", "-x", "ü-suite", "n" * 300])
def test_generated_ids_follow_the_rule(suite_name: str) -> None:
    made = new_run_id(suite_name)
    assert SAFE_RUN_ID.fullmatch(made), made
    if suite_name == "retail":
        assert made.startswith("retail-")


def test_a_run_stored_under_an_older_id_still_loads(tmp_path: Path) -> None:
    """Stores made before the rule may hold ids with spaces or slashes: their runs (and
    the specs stored with them) read back as before."""
    store = Store(str(tmp_path / "s.db"))
    run = assay.run("retail", run_id="old", trials=1, task_ids=["address-change-1"], store=store)
    info = store.get_run(run.run_id)
    info.spec.run_id = "my run/1"
    RunSpec.model_validate(info.spec.model_dump())  # the model itself takes any id
    store.update_info(info)
    assert store.get_run("old").spec.run_id == "my run/1"
