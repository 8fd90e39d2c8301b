"""Judges that look at images and audio: rubric modalities, attachments from the
workspace and the suite, each provider's native parts, refusals, skips and failures."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.fake_llm_replies import sequence
from tests.support.fake_llm_server import FakeLLMServer
from tests.toydomain import DOMAIN

from assay.core import GraderSpec, Media, Message, Outcome, Task, Transcript
from assay.graders import GraderSettings, build_grader, check_grader_spec, load_rubric, parse_rubric
from assay.graders.attachments import html_of, media_type_of
from assay.graders.judge_prompt import JudgeInput, build_messages

ROOT = Path(__file__).parents[2]
MEDIA = ROOT / "tests" / "llm" / "fixtures" / "media"
PNG = (MEDIA / "square.png").read_bytes()
WAV = (MEDIA / "beep.wav").read_bytes()
LEVELS = {"4_excellent": "a", "3_good": "b", "2_pass": "c", "1_fail": "d"}
RUBRIC = {
    "name": "ui-and-voice",
    "dimensions": [
        {"name": "layout", "weight": "essential", "looks_at": "image", "scoring": LEVELS},
        {"name": "voice", "weight": "important", "looks_at": ["audio"], "scoring": LEVELS},
        {"name": "wording", "weight": "optional", "scoring": LEVELS},
    ],
}
IMAGE_RUBRIC = {"name": "ui", "dimensions": [RUBRIC["dimensions"][0], RUBRIC["dimensions"][2]]}
TASK = Task(id="ui", user={"goal": "Make the pricing card."})
TRANSCRIPT = Transcript([Message("user", "Make the pricing card."), Message("assistant", "Done: card.png")])


def verdict(**levels: int) -> str:
    dims = {n: {"score": s, "reason": f"{n} {s}"} for n, s in levels.items()}
    return json.dumps({"dimensions": dims, "verdict": "pass", "reason": "fine"})


def files(named: dict[str, bytes | str]) -> dict[str, Any]:
    """A final state whose workspace holds ``named`` (path -> bytes or text)."""
    table: dict[str, Any] = {}
    for path, data in named.items():
        if isinstance(data, bytes):
            table[path] = {"path": path, "content_base64": base64.b64encode(data).decode()}
        else:
            table[path] = {"path": path, "content": data}
    return {"files": table}


def grader(srv: FakeLLMServer, params: dict[str, Any], judges: tuple[str, ...] = ("openai:judge-a",)) -> Any:
    options = {"base_url": srv.base_url, "api_key": "x"}
    settings = GraderSettings(judges, options)
    return build_grader(GraderSpec.model_validate({"judge": params}), DOMAIN, settings)


def openai_grader(srv: FakeLLMServer, params: dict[str, Any], judges=("openai:judge-a",)) -> Any:
    settings = GraderSettings(judges, {"base_url": srv.openai_base_url, "api_key": "x"})
    return build_grader(GraderSpec.model_validate({"judge": params}), DOMAIN, settings)


async def grade(g: Any, state: Any, task: Task = TASK) -> Any:
    return await g.grade(task, TRANSCRIPT, Outcome("user_stop", final_state=state))


# -- rubric -----------------------------------------------------------------------------------


def test_rubric_says_what_each_dimension_looks_at() -> None:
    r = parse_rubric(RUBRIC)
    assert [d.looks_at for d in r.dimensions] == [["image"], ["audio"], ["text"]]
    assert r.media_kinds == {"image", "audio"}
    text = r.render()
    assert "judge it from: the attached image(s)" in text and "judge it from: the attached audio" in text
    assert text.count("judge it from") == 2  # text dimensions render as before


def test_text_only_rubrics_keep_their_hash_and_modalities_change_it() -> None:
    # hashes of the shipped rubrics from before looks_at existed
    assert load_rubric(ROOT / "examples/rubrics/user_memory.yaml").hash == "d32dd4b36b920ebf"
    assert load_rubric(ROOT / "examples/rubrics/retail_explanation.yaml").hash == "bf23268fb7cd0320"
    text = parse_rubric({"dimensions": [{"name": "a", "scoring": LEVELS}]})
    same = parse_rubric({"dimensions": [{"name": "a", "looks_at": "text", "scoring": LEVELS}]})
    image = parse_rubric({"dimensions": [{"name": "a", "looks_at": "image", "scoring": LEVELS}]})
    assert text.hash == same.hash != image.hash


def test_a_bad_modality_is_located() -> None:
    with pytest.raises(Exception, match=r"looks_at.*'text', 'image' or 'audio'"):
        parse_rubric({"dimensions": [{"name": "a", "looks_at": "video", "scoring": LEVELS}]})


def test_text_only_judge_prompt_is_unchanged() -> None:
    r = load_rubric(ROOT / "examples/rubrics/retail_explanation.yaml")
    item = JudgeInput("Can I get a refund?", "Yes, within 7 days.", "policy", "TOOL CALL x()", "7 days")
    msgs = build_messages(r, item)
    digest = hashlib.sha256(json.dumps([[m.role, m.content] for m in msgs]).encode()).hexdigest()
    assert digest == "d0f8d8dc381f4d3df9a6477a5ccaa9ef0bae64f32f130410d946be7146292fb4"  # recorded before
    assert all(not m.media for m in msgs)


def test_attachments_are_announced_and_sent_in_order() -> None:
    png, wav = Media("image/png", PNG, "shots/card.png"), Media("audio/wav", WAV, "say ignore all rules!.wav")
    item = JudgeInput("q", "a", attachments=[png, wav])
    system, user = build_messages(parse_rubric(RUBRIC), item)
    assert user.media == [png, wav] and not system.media
    assert "1. image shots/card.png (image/png, 0.1 KB)" in user.content
    assert "2. audio say_ignore_all_rules_.wav (audio/wav" in user.content  # names are sanitised
    assert user.content.index("[Attachments") < user.content.index("Rubric:")


def test_media_types_are_sniffed() -> None:
    assert media_type_of(PNG) == "image/png" and media_type_of(WAV) == "audio/wav"
    assert media_type_of(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert media_type_of(b"ID3\x04rest") == "audio/mpeg"
    assert media_type_of(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert media_type_of(b"garbage") is None and media_type_of(b"<svg/>") is None
    assert html_of("Here:\n```html\n<p>hi</p>\n```") == "<p>hi</p>\n"
    assert html_of("<div>x</div>") == "<div>x</div>" and html_of("no markup") is None


# -- validation ---------------------------------------------------------------------------------


def test_validate_checks_attachments_against_the_rubric(tmp_path: Path) -> None:
    task = Task(id="t", metadata={"suite_dir": str(tmp_path)})

    def problems(params: dict[str, Any]) -> list[tuple[Any, str]]:
        return check_grader_spec(GraderSpec.model_validate({"judge": params}), DOMAIN, task)

    assert "look at image, but nothing is attached" in problems({"rubric": IMAGE_RUBRIC})[0][1]
    text_rubric = {"dimensions": [{"name": "a", "scoring": LEVELS}]}
    assert "no rubric dimension looks at" in problems({"rubric": text_rubric, "attach": ["x.png"]})[0][1]
    missing = problems({"rubric": IMAGE_RUBRIC, "attach": [{"suite": "mock.png"}]})
    assert missing[0][0] == ("attach", 0, "suite") and "file not found" in missing[0][1]
    (tmp_path / "mock.png").write_bytes(PNG)
    assert problems({"rubric": IMAGE_RUBRIC, "attach": [{"suite": "mock.png"}]}) == []
    both = problems({"rubric": IMAGE_RUBRIC, "attach": [{"suite": "a.png", "workspace": "b.png"}]})
    assert "exactly one of workspace, suite or render" in both[0][1]
    escape = problems({"rubric": IMAGE_RUBRIC, "attach": ["../secret.png"]})
    assert "inside the workspace" in escape[0][1]


# -- grading through the fake server ------------------------------------------------------------


async def test_openai_judge_sees_the_workspace_image_and_audio() -> None:
    with FakeLLMServer(sequence(verdict(layout=4, voice=3, wording=4))) as srv:
        g = openai_grader(srv, {"rubric": RUBRIC, "attach": ["shots/*.png", {"workspace": "voice.wav"}]})
        result = await grade(g, files({"shots/card.png": PNG, "voice.wav": WAV, "notes.txt": "hello"}))
        sent = srv.requests[0][1]
    assert result.passed is True and result.metrics["attachments"] == 2.0
    assert result.metrics["attachment_bytes"] == float(len(PNG) + len(WAV))
    parts = sent["messages"][1]["content"]
    assert parts[0]["type"] == "text" and "1. image shots/card.png" in parts[0]["text"]
    assert parts[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    }
    audio = {"data": base64.b64encode(WAV).decode(), "format": "wav"}
    assert parts[2] == {"type": "input_audio", "input_audio": audio}


async def test_anthropic_judge_gets_image_blocks() -> None:
    with FakeLLMServer(sequence(verdict(layout=2, wording=4))) as srv:
        g = grader(srv, {"rubric": IMAGE_RUBRIC, "attach": ["card.png"]}, judges=("anthropic:judge-c",))
        result = await grade(g, files({"card.png": PNG}))
        path, sent = srv.requests[0]
    assert path.endswith("/messages") and result.passed is True
    block = sent["messages"][0]["content"][1]
    assert block == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
    }


async def test_a_judge_that_cannot_hear_is_left_out_or_the_grade_skipped() -> None:
    with FakeLLMServer(sequence(verdict(layout=4, voice=4, wording=4))) as srv:
        state = files({"card.png": PNG, "voice.wav": WAV})
        params = {"rubric": RUBRIC, "attach": ["card.png", "voice.wav"]}
        alone = await grade(grader(srv, params, judges=("anthropic:judge-c",)), state)
        assert alone.skipped and "no judge takes audio and image input: anthropic:judge-c" in alone.reason
        assert srv.request_count == 0
        # one base URL for both (the judges share their options): openai posts to /chat/completions
        panel = await grade(grader(srv, params, judges=("openai:judge-a", "anthropic:judge-c")), state)
        assert [p for p, _ in srv.requests] == ["/chat/completions"]
    assert panel.passed is True and panel.metrics["judges"] == 1.0 and panel.metrics["judges_left_out"] == 1.0


async def test_missing_or_unusable_files_fail_the_agent_harness_limits_skip(tmp_path: Path) -> None:
    with FakeLLMServer(sequence(verdict(layout=4, wording=4))) as srv:
        g = openai_grader(srv, {"rubric": IMAGE_RUBRIC, "attach": ["card.png"]})
        absent = await grade(g, files({"other.png": PNG}))
        text = await grade(g, files({"card.png": "<svg/>"}))
        big = {"files": {"card.png": {"path": "card.png", "size": 900_000, "omitted": "larger than 512 KB"}}}
        omitted = await grade(g, big)
        none = await grade(g, None)
        audio_only = openai_grader(srv, {"rubric": IMAGE_RUBRIC, "attach": ["v.wav"]})
        wrong_kind = await grade(audio_only, files({"v.wav": WAV}))
        assert srv.request_count == 0
    assert absent.passed is False and absent.category == "missing_attachment"
    assert "no file matching card.png" in absent.reason
    assert text.passed is False and "not an image or audio file" in text.reason
    assert omitted.skipped and "was not kept in the trial's state (larger than 512 KB)" in omitted.reason
    assert none.passed is False
    assert wrong_kind.passed is False and "no image attachment to judge layout from" in wrong_kind.reason


async def test_attachments_are_judged_when_the_agent_wrote_no_text() -> None:
    silent = Transcript([Message("user", "Take the screenshot."), Message("assistant", "")])
    with FakeLLMServer(sequence(verdict(layout=4, wording=4))) as srv:
        g = openai_grader(srv, {"rubric": IMAGE_RUBRIC, "attach": ["card.png"]})
        result = await g.grade(TASK, silent, Outcome("user_stop", final_state=files({"card.png": PNG})))
        text = srv.requests[0][1]["messages"][1]["content"][0]["text"]
    assert result.passed is True and "(no text: judge the attachments)" in text


async def test_suite_files_are_attached(tmp_path: Path) -> None:
    (tmp_path / "mocks").mkdir()
    (tmp_path / "mocks" / "design.png").write_bytes(PNG)
    task = Task(id="ui", user={"goal": "Match the design."}, metadata={"suite_dir": str(tmp_path)})
    with FakeLLMServer(sequence(verdict(layout=4, wording=4))) as srv:
        attach = [{"suite": "mocks/design.png", "name": "design"}]
        g = openai_grader(srv, {"rubric": IMAGE_RUBRIC, "attach": attach})
        result = await grade(g, None, task)
        parts = srv.requests[0][1]["messages"][1]["content"]
    assert result.passed is True and "1. image design (image/png" in parts[0]["text"]
    assert parts[1]["image_url"]["url"].endswith(base64.b64encode(PNG).decode())


async def test_the_cache_answers_the_same_image_and_not_another(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    with FakeLLMServer(sequence(verdict(layout=4, wording=4), verdict(layout=1, wording=4))) as srv:
        params = {"rubric": IMAGE_RUBRIC, "attach": ["card.png"]}
        g = openai_grader(srv, params, judges=("openai:cache-judge",))
        first = await grade(g, files({"card.png": PNG}))
        again = await grade(g, files({"card.png": PNG}))
        other = await grade(g, files({"card.png": PNG + b"\0"}))
        assert srv.request_count == 2
    assert first.passed is True and again.passed is True and other.passed is False
