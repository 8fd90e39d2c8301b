"""What the trial loop computes once instead of per trial or per turn: the meter
installed for the whole trial (each turn sets only its role), the configuration hash
once per run. Each must give what the per-turn/per-trial computation gave."""

from __future__ import annotations

from pathlib import Path

import assay
from assay.llm.meter import Meter, current_meter, current_role, use_meter


def test_use_meter_restores_what_was_there_when_the_value_is_already_set() -> None:
    trial, other = Meter(), Meter()
    assert current_meter() is None
    with use_meter(trial):
        with use_meter(trial, "user"):  # the same meter: only the role is set
            assert current_meter() is trial and current_role() == "user"
            with use_meter(trial, "user"):
                assert current_role() == "user"
            assert current_role() == "user"
            with use_meter(other, "judge"):
                assert current_meter() is other and current_role() == "judge"
            assert current_meter() is trial and current_role() == "user"
        assert current_meter() is trial and current_role() == "agent"
    assert current_meter() is None and current_role() == "agent"


def test_a_meter_counts_its_calls_without_copying_them() -> None:
    meter = Meter()
    assert meter.calls == 0 and meter.totals().calls == 0


TRIVIAL = """\
name: two
tasks:
  - id: t
    instances: 3
    user: {opening: "Say hello."}
    graders:
      - text: {contains: hello}
"""


def hello(conversation: object) -> str:
    return "hello"


def test_trials_carry_the_run_configuration_hash(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(TRIVIAL)
    run = assay.run(
        tmp_path, agent="python:tests.runner.test_hot_path:hello", trials=2, store=str(tmp_path / "s.db")
    )
    assert run.info.config_hash == run.info.config.hash
    assert {r.config_hash for r in run.results} == {run.info.config.hash}
    assert len(run.results) == 6
