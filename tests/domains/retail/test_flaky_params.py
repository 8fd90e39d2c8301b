"""The flaky reference agent's ``slip`` is a probability: a mistyped ``-p slip=x`` stops
the run as a usage error (exit 2) instead of failing every trial as the agent's error."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.store import Store
from tests.support.cli import assay_main


@pytest.mark.parametrize("value", ["x", "nan", "5", "-0.1"])
def test_a_slip_that_is_not_a_probability_is_a_usage_error(tmp_path: Path, value: str) -> None:
    store = tmp_path / "s.db"
    result = assay_main(
        "run",
        "retail",
        "--agent",
        "builtin:retail-flaky",
        "-k",
        "1",
        "-p",
        f"slip={value}",
        "--store",
        str(store),
    )
    assert result.code == 2, result
    assert f"-p slip={value}: builtin:retail-flaky's slip is a probability from 0 to 1" in result.err
    assert "Traceback" not in result.stderr
    runs = Store(str(store)).list_runs()
    assert all(r["status"] != "finished" for r in runs)  # no trial blamed on the agent as a result
    for r in runs:
        assert not any(t.termination == "agent_error" for t in Store(str(store)).load_results(r["run_id"]))


def test_a_probability_runs(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    result = assay_main(
        "run", "retail", "--agent", "builtin:retail-flaky", "-k", "1", "-p", "slip=0", "--store", str(store)
    )
    assert result.code == 0, result
