"""``assay plan --suite S --split X``: an unknown split is refused as ``assay run``
refuses it (exit 2), never a plan without the line on what the suite can detect."""

from __future__ import annotations

from tests.support.cli import assay_main

RATES = ("--baseline", "0.7", "--mde", "0.05")


def test_plan_refuses_a_split_with_no_task() -> None:
    plan = assay_main("plan", "--suite", "retail", "--split", "nope", *RATES)
    assert plan.code == 2 and "Traceback" not in plan.stderr, (plan.stdout, plan.stderr)
    assert "--split nope: no task of suite retail is in this split" in plan.err
    run = assay_main("run", "retail", "--split", "nope", "--store", ":memory:")
    assert run.code == 2  # as assay run
    alone = assay_main("plan", "--split", "holdout", *RATES)
    assert alone.code == 2 and "give --suite too" in alone.err
    holdout = assay_main(
        "plan", "--suite", "retail", "--split", "holdout", "--baseline", "0.7", "--mde", "0.05"
    )
    assert holdout.code == 0 and "can detect" in holdout.stdout, holdout.stderr
