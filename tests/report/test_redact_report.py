"""``assay report --redact`` and ``assay export --redact``: a run whose trials carry a key,
emails, phones and a card number (in user messages, tool arguments, tool outputs, tool
errors, answers, an agent error, a state diff and a grader reason) gives a report and a
run record without any of them, with consistent pseudonyms per trial and the same
figures; without the option both are as before."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

from assay.redact.checks import alnum
from tests.report.planted_world import AGENT, PLANTED, write_suite
from tests.report.test_html import data_of, unpack
from tests.support.cli import assay_main
from tests.support.redaction_eval import strings

VALUES = [v for values in PLANTED.values() for v in values]
WINDOW = 10  # no run of this many letters and digits of a planted value may survive


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of run ``planted``: 2 tasks x 2 trials, every trial failed."""
    tmp = tmp_path_factory.mktemp("planted")
    suite = write_suite(tmp / "planted")
    store = tmp / "p.db"
    out = assay_main(
        "run", str(suite), "--agent", AGENT, "-k", "2", "--run-id", "planted", "--store", str(store)
    )
    assert out.code == 0, out.stderr
    return store


def _report(store: Path, path: Path, *options: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    out = assay_main(
        "report",
        "planted",
        "--html",
        str(path),
        "--transcripts",
        "all",
        "--store",
        str(store),
        "--json",
        *options,
    )
    assert out.code == 0, out.stderr
    page = path.read_text()
    texts = {key: html_lib.unescape(value) for key, value in unpack(page).items()}
    return page, texts, json.loads(out.stdout)


def _leaks(texts: list[str]) -> list[str]:
    """The planted values (as written, JSON- or HTML-escaped, or any 10 letters and
    digits of one in a row) found in ``texts``."""
    compact = [alnum(t) for t in texts]
    found = []
    for value in VALUES:
        forms = {value, json.dumps(value)[1:-1], html_lib.escape(value)}
        if any(form in t for form in forms for t in texts):
            found.append(value)
            continue
        core = alnum(value)
        windows = {core[i : i + WINDOW] for i in range(max(1, len(core) - WINDOW + 1))}
        if any(w in c for w in windows for c in compact):
            found.append(f"fragment of {value}")
    return found


def _without_trial_text(page: str) -> str:
    """The report minus what differs by design: the transcripts, the redaction note and
    the time it was generated."""
    page = re.sub(r'(id="report-transcripts" data-encoding="gzip\+base64">)[^<]*<', r"\1<", page)
    page = re.sub(r'<div class="note" id="redaction-note">.*?</div>\n', "", page)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<time>", page)


def test_report_redact_replaces_every_planted_value_and_keeps_the_figures(
    planted: Path, tmp_path: Path
) -> None:
    raw_page, raw, raw_info = _report(planted, tmp_path / "raw.html")
    assert raw_info["redacted"] is False and "redaction-note" not in raw_page
    assert set(_leaks(list(raw.values()))) >= set(VALUES)  # the check finds them when they are there
    assert len(raw) == 4

    page, texts, info = _report(planted, tmp_path / "red.html", "--redact")
    assert _leaks([page, *texts.values()]) == []
    # nor anywhere in the data the page carries (task and trial tables)
    assert _leaks(list(strings(data_of(page)))) == []
    assert info["redacted"] is True and info["transcripts"] == 4
    assert set(info["redacted_kinds"]) >= set(PLANTED) and info["redacted_values"] >= 30
    assert "redaction-note" in page and f"{info['redacted_values']} values" in page
    # the figures, tables, charts and provenance are those of the unredacted report
    assert _without_trial_text(page) == _without_trial_text(raw_page)
    assert data_of(page) == data_of(raw_page)

    # pseudonyms, consistent within a trial: the number the user asked for, the one the
    # agent wrote and the one the grader's reason names are the same pseudonyms
    text = texts["planted/change-phone/0"]
    for kind in PLANTED:
        assert f"<{kind}_1>" in text, kind
    asked = re.search(r"change my phone to <PHONE_(\d+)>", text)
    written = re.search(r'update_phone\(<pre[^>]*>\{"customer_id": "c1", "phone": "<PHONE_(\d+)>"\}', text)
    reason = re.search(r"c1\.phone is '<PHONE_(\d+)>', expected '<PHONE_(\d+)>'", text)
    assert asked and written and reason, text
    assert reason.groups() == (written.group(1), asked.group(1)) and asked.group(1) != written.group(1)
    # the email of the user's message is the one of the tool call, its output and the answer
    email = re.search(r"I'm <EMAIL_(\d+)>", text)
    assert email and text.count(f"<EMAIL_{email.group(1)}>") >= 4
    card = re.search(r"Card <CARD_(\d+)> stays on file", text)
    assert card and f'"card": "<CARD_{card.group(1)}>"' in text
    # the agent's error (outcome and span) is redacted too
    crash = texts["planted/charge-card/0"]
    assert "RuntimeError: payment gateway refused key <OPENAI_KEY_1> for <EMAIL_1> (card <CARD_1>)" in crash


def test_report_redact_config_and_its_errors(planted: Path, tmp_path: Path) -> None:
    config = tmp_path / "redact.yaml"
    config.write_text("style: label\nkinds:\n  PHONE: false\n")
    _, texts, info = _report(planted, tmp_path / "label.html", "--redact-config", str(config))
    text = texts["planted/change-phone/0"]
    assert info["redacted"] is True and "<EMAIL>" in text and "<EMAIL_1>" not in text
    assert "+44 20 7946 0958" in text and "PHONE" not in info["redacted_kinds"]  # switched off
    bad = tmp_path / "bad.yaml"
    bad.write_text("kinds:\n  NOPE: false\n")
    out = assay_main(
        "report", "planted", "--redact", "--redact-config", str(bad), "--html", str(tmp_path / "x.html"),
        "--store", str(planted),
    )  # fmt: skip
    assert out.code == 2 and "bad.yaml:2" in out.err and "NOPE" in out.err and "Traceback" not in out.stderr


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _figures(line: dict[str, Any]) -> dict[str, Any]:
    trial = line["trial"]
    keep = ("task_id", "trial_index", "seed", "reward", "termination", "root_cause", "latency_s")
    return {
        **{k: trial[k] for k in keep},
        "grades": [(g["grader"], g["passed"], g["score"]) for g in line["grades"]],
        "messages": len(line["transcript"]["messages"]),
        "spans": [(s["kind"], s["name"], s["start"], s["end"]) for s in line["transcript"]["spans"]],
    }


def test_export_redact_writes_a_record_without_the_planted_values(planted: Path, tmp_path: Path) -> None:
    raw_path, red_path = tmp_path / "raw.jsonl", tmp_path / "red.jsonl"
    raw = assay_main("export", "planted", "-o", str(raw_path), "--store", str(planted), "--json")
    assert raw.code == 0, raw.stderr
    raw_lines = _lines(raw_path)
    assert "redacted" not in raw_lines[0] and raw_lines[-1] == {"kind": "end", "trials": 4, "attempts": 0}
    assert "redacted_values" not in json.loads(raw.stdout)
    assert set(_leaks(list(strings(raw_lines)))) >= set(VALUES)

    out = assay_main("export", "planted", "-o", str(red_path), "--redact", "--store", str(planted), "--json")
    assert out.code == 0, out.stderr
    info = json.loads(out.stdout)
    lines = _lines(red_path)
    assert _leaks([red_path.read_text(), *strings(lines)]) == []
    assert lines[0]["redacted"] is True and lines[-1]["redacted"] == info["redacted_kinds"]
    assert set(info["redacted_kinds"]) >= set(PLANTED) and info["redacted_values"] >= 30
    trials = [x for x in lines if x["kind"] == "trial"]
    assert [_figures(x) for x in trials] == [_figures(x) for x in raw_lines if x["kind"] == "trial"]
    assert "<EMAIL_1>" in json.dumps(trials)

    # the redacted record imports, and the store it lands in reports the same figures
    other = tmp_path / "other.db"
    assert assay_main("import", "run", str(red_path), "--store", str(other)).code == 0
    before = json.loads(assay_main("show", "planted", "--json", "--store", str(planted)).stdout)
    after = json.loads(assay_main("show", "planted", "--json", "--store", str(other)).stdout)
    assert before["overall"] == after["overall"] and before["tasks"] == after["tasks"]
    page, texts, _ = _report(other, tmp_path / "imported.html")
    assert _leaks([page, *texts.values()]) == [] and "<CARD_1>" in texts["planted/change-phone/1"]


@pytest.mark.parametrize("as_json", [False, True], ids=["console", "json"])
def test_show_redact_shows_a_trial_without_the_planted_values(planted: Path, as_json: bool) -> None:
    """``assay show RUN --task T --redact``: the trials' table and the transcript (console
    or JSON) carry none of the planted values; the same command without --redact shows
    them, and the rewards are the same either way."""
    json_flag = ("--json",) if as_json else ()
    for task in ("change-phone", "charge-card"):
        args = ("show", "planted", "--task", task, "--store", str(planted), *json_flag)
        plain, redacted = (
            assay_main(*args, env={"COLUMNS": "400"}),
            assay_main(*args, "--redact", env={"COLUMNS": "400"}),
        )
        assert plain.code == redacted.code == 0, redacted.stderr
        assert _leaks([plain.stdout]), task  # the run does show them: the check can fail
        assert _leaks([redacted.stdout]) == [], task
        assert "<" in redacted.stdout and ">" in redacted.stdout  # pseudonyms such as <EMAIL_1>
        if as_json:
            rewards = [[t["reward"] for t in json.loads(out.stdout)["trials"]] for out in (plain, redacted)]
            assert rewards[0] == rewards[1]
