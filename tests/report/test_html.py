"""The one-file HTML report, its data, and the transcript view."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

from assay.core import Message, ToolCall
from assay.core.results import GradeResult, Outcome, TrialResult
from assay.core.transcript import Span, Transcript
from assay.metrics.summary_model import task_outcome
from assay.report.comparison import task_rows
from assay.report.html import build_report, write_report
from assay.report.runview import build_run_view
from assay.report.transcript_view import transcript_view
from assay.runner.api import Run
from assay.store import Store
from tests.server.support import toy_runs
from tests.support.cli import assay_main

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Run]:
    tmp = tmp_path_factory.mktemp("report")
    store = Store(tmp / "r.db")
    a, b = toy_runs(tmp, store)
    return Run.load(a, store), Run.load(b, store)


def unpack(html: str) -> dict[str, str]:
    blob = re.search(r'id="report-transcripts" data-encoding="gzip\+base64">([^<]*)<', html)
    assert blob is not None
    return json.loads(gzip.decompress(base64.b64decode(blob.group(1)))) if blob.group(1) else {}


def data_of(html: str) -> dict:
    raw = html.split('<script type="application/json" id="report-data">')[1].split("</script>")[0]
    return json.loads(raw)


def test_single_run_report_is_self_contained(runs: tuple[Run, Run]) -> None:
    flaky = runs[1]
    report = build_report([flaky])
    html = report.html
    assert html.startswith("<!doctype html>") and len(html) < 3_000_000
    # nothing is fetched: no external scripts, styles, images or fonts
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert '<link rel="stylesheet"' not in html and "@import" not in html and "url(http" not in html
    assert "default-src 'none'" in html  # the CSP forbids any request
    for text in (
        "success rate",
        "95% CI",
        "pass^3",
        "pass@3",
        "Capability × difficulty",
        "Failure categories",
        "Root-cause layers",
        "Latency",
        "Box score",
        "Provenance",
    ):
        assert text in html, text
    assert html.count("<svg") >= 4
    data = data_of(html)
    tasks = data["runs"][0]["tasks"]
    assert {t["outcome"] for t in tasks} <= {"pass", "flaky", "fail", "excluded"}
    failed = [r for r in flaky.results if r.reward != 1]
    assert failed, "the flaky toy agent should fail some trials"
    packed = unpack(html)
    assert set(packed) == {f"flaky/{r.task_id}/{r.trial_index}" for r in failed} == set(data["transcripts"])
    assert report.transcripts == len(failed) and report.left_out == 0
    one = next(iter(packed.values()))
    assert 'class="transcript"' in one and "deposit(" in one and "Verdicts" in one


def test_two_runs_add_overview_and_paired_comparison(runs: tuple[Run, Run], tmp_path: Path) -> None:
    careful, flaky = runs
    out = write_report([careful.run_id, flaky.run_id], tmp_path / "r.html", careful.store)
    html = out.path.read_text()
    assert out.size_bytes == len(html.encode()) and out.runs == ["careful", "flaky"]
    assert "Runs at a glance" in html and "careful → flaky" in html
    assert "Decision" in html and "McNemar" in html and "tasks solved" in html
    cmp_rows = data_of(html)["comparisons"][0]["tasks"]
    assert {r["task_id"] for r in cmp_rows} == {t.task_id for t in careful.tasks}


def test_transcript_limits_and_choices(runs: tuple[Run, Run]) -> None:
    flaky = runs[1]
    assert build_report([flaky], transcripts="none").transcripts == 0
    capped = build_report([flaky], max_transcripts=1)
    assert capped.transcripts == 1 and capped.left_out >= 1 and "left out" in capped.html
    every = build_report([flaky], transcripts="all")
    assert every.transcripts == len(flaky.results)


def test_run_view_figures(runs: tuple[Run, Run]) -> None:
    careful, flaky = runs
    view = build_run_view(flaky)
    success = view["headline"]["success"]
    assert success["method"] == "task-clustered Wilson" and success["n"] == 18 and success["tasks"] == 6
    assert success["low"] <= success["value"] <= success["high"]
    assert [success["low"], success["high"]] == list(flaky.summary().overall.success_rate_ci)
    hat = view["headline"]["curves"]["pass_hat_k"]
    assert [p["k"] for p in hat] == [1, 2, 3] and hat[0]["value"] >= hat[-1]["value"]
    assert all(p["low"] <= p["value"] <= p["high"] for p in hat)
    assert sum(view["failures"]["categories"].values()) == sum(r.reward == 0 for r in flaky.results)
    assert build_run_view(careful)["headline"]["task_outcomes"]["pass"] == 6
    assert task_outcome([1, 1, None]) == "pass" and task_outcome([0, 1]) == "flaky"
    assert task_outcome([0, 0]) == "fail" and task_outcome([None]) == "excluded"
    perfect = build_run_view(careful)["headline"]["success"]
    assert perfect["value"] == 1.0 and perfect["low"] < 1.0  # never a zero-width interval at 100%


def test_comparison_rows_put_flipped_tasks_first(runs: tuple[Run, Run]) -> None:
    careful, flaky = runs
    rows = task_rows(careful, flaky)
    order = {"regressed": 0, "improved": 1, "changed": 2, "same": 3}
    assert [order[r["change"]] for r in rows] == sorted(order[r["change"]] for r in rows)
    assert all(r["delta"] <= 0 for r in rows)  # the flaky agent never beats the careful one
    assert any(r["flipped"] for r in rows) or any(r["change"] == "changed" for r in rows)


def _trial(grades: list[GradeResult], transcript: Transcript) -> TrialResult:
    return TrialResult(
        "r",
        "t",
        0,
        1,
        "c",
        0,
        "user_stop",
        grades=grades,
        outcome=Outcome(
            "user_stop",
            diff=[{"op": "change", "table": "accounts", "key": "A1", "field": "balance", "old": 0, "new": 5}],
        ),
    )


def test_transcript_view_places_verdicts_next_to_their_step() -> None:
    messages = [
        Message("user", "Hi"),
        Message("assistant", "", tool_calls=[ToolCall("c1", "get_balance", {"account_id": "A1"})]),
        Message("tool", "Error: account A1 does not exist", tool_call_id="c1", error=True),
        Message("assistant", "", tool_calls=[ToolCall("c2", "deposit", {"account_id": "A1", "amount": 5})]),
        Message("tool", "deposited 5 into A1", tool_call_id="c2"),
        Message("assistant", "Done."),
        Message("user", "Bye ###STOP###"),
    ]
    spans = [
        Span(0, "trial", "t", 0.0, 1.0),
        Span(1, "user", "user", 0.0, 0.1, 0),
        Span(2, "agent", "respond", 0.1, 0.3, 0, {"input_tokens": 10, "output_tokens": 5}),
        Span(3, "tool", "get_balance", 0.3, 0.31, 0, {"caller": "agent"}),
        Span(4, "agent", "respond", 0.31, 0.5, 0),
        Span(5, "tool", "deposit", 0.5, 0.52, 0),
        Span(6, "agent", "respond", 0.52, 0.7, 0),
        Span(7, "user", "user", 0.7, 0.8, 0, error="boom"),
    ]
    grades = [
        GradeResult("actions", "actions", False, 0.0, "no explicit confirmation before deposit"),
        GradeResult("state", "state", True, 1.0, "end state matches gold"),
        GradeResult("communicate", "communicate", False, 0.0, "did not say the refund id"),
        GradeResult("custom-check", "custom", None, None, "could not run", skipped=True),
        GradeResult("pointer", "custom", False, None, "the first message was rude", metrics={"step": 0}),
    ]
    tv = transcript_view(_trial(grades, Transcript(messages, spans)), Transcript(messages, spans))
    roles = [(s.role, s.tool) for s in tv.steps]
    assert roles == [
        ("user", None),
        ("tool", "get_balance"),
        ("tool", "deposit"),
        ("agent", None),
        ("user", None),
    ]
    tool_error = tv.steps[1]
    assert (
        tool_error.error and "does not exist" in (tool_error.result or "") and tool_error.duration_ms == 10.0
    )
    places = {v.grader: v.place for v in tv.verdicts}
    assert places == {"actions": 2, "state": "diff", "communicate": 3, "custom-check": None, "pointer": 0}
    assert [v.grader for v in tv.steps[2].verdicts] == ["actions"]
    assert tv.verdicts[3].status == "skipped" and tv.status == "fail"
    assert tv.timeline[0].width_pct == 100 and tv.timeline[2].tokens == 15
    assert tv.timeline[-1].error == "boom" and tv.timeline[1].depth == 1
    missing = transcript_view(_trial(grades, Transcript()), None)
    assert missing.steps == [] and not missing.has_transcript


def test_report_cli(runs: tuple[Run, Run], tmp_path: Path) -> None:
    store = runs[0].store.url.removeprefix("sqlite:///")
    out = tmp_path / "sub" / "report.html"
    proc = assay_main("report", "careful", "flaky", "--html", str(out), "--store", store, "--json", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["path"] == str(out) and out.stat().st_size == info["bytes"] and info["transcripts"] > 0
    bad = assay_main("report", "nope", "--html", str(out), "--store", store, cwd=ROOT)
    assert bad.returncode == 2 and "no run 'nope'" in bad.stderr and "Traceback" not in bad.stderr
    bad = assay_main(
        "report", "careful", "--transcripts", "some", "--html", str(out), "--store", store, cwd=ROOT
    )
    assert bad.returncode == 2 and "--transcripts must be" in bad.stderr
    bad = assay_main("report", "careful", "--html", str(tmp_path), "--store", store, cwd=ROOT)
    assert bad.returncode == 2 and "is a directory" in bad.stderr
