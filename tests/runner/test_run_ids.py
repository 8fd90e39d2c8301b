"""Run ids are printed, stored and used in the viewer's URLs: a new run's id (given with
``--run-id``, ``run_id=`` or a spec file) must be letters, digits and ``_ . : -``; a
generated id stays within that rule whatever the suite is called."""

from __future__ import annotations

import re
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
    assert run_id_problem(run_id) is not None
    with pytest.raises(ValueError, match=re.escape("use letters, digits and _ . : -")):
        RunSpec(suite="retail", run_id=run_id)


@pytest.mark.parametrize("run_id", GOOD)
def test_safe_run_ids_are_taken(run_id: str) -> None:
    assert run_id_problem(run_id) is None
    assert RunSpec(suite="retail", run_id=run_id).run_id == run_id


def test_the_cli_says_which_option_and_writes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    result = assay_main("run", "retail", "-k", "1", "--run-id", "../x", "--store", str(store))
    assert result.code == 2
    assert "--run-id: run id '../x': use letters, digits and _ . : -" in result.err
    assert "Traceback" not in result.stderr
    assert not store.exists() or Store(str(store)).list_runs() == []


def test_the_api_raises_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="run_id: run id 'a/b'"):
        assay.run("retail", run_id="a/b", trials=1, store=str(tmp_path / "s.db"))


@pytest.mark.parametrize("suite_name", ["retail", "my suite/v2", "<b>", "-x", "ü-suite", "n" * 300])
def test_generated_ids_follow_the_rule(suite_name: str) -> None:
    made = new_run_id(suite_name)
    assert SAFE_RUN_ID.fullmatch(made), made
    if suite_name == "retail":
        assert made.startswith("retail-")
