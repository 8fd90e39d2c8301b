"""examples/ui-screenshots end to end: answers rendered in headless Chromium, the
screenshots sent to a judge (the fake server, with a Pillow-based stand-in vision judge)
in OpenAI's and Anthropic's native image formats, graded for overflow and contrast."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.vision_judge import VisionJudge, contrast_ratio, images_of

from assay.graders.render import chromium_path, render_html
from assay.runner.api import run

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "ui-screenshots"

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="no Chromium; run scripts/install-browser.sh")


@pytest.fixture
def agents(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("playwright.async_api", reason="playwright is not installed (the test extra)")
    monkeypatch.syspath_prepend(str(EXAMPLE))


def test_wcag_contrast_of_the_stand_in_judge() -> None:
    # WCAG 2 reference values: black/white 21:1, #767676 on white 4.54:1
    assert contrast_ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast_ratio((0x76, 0x76, 0x76), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)


def test_careful_passes_sloppy_fails_on_what_the_screenshots_show(agents: None) -> None:
    from PIL import Image

    judge = VisionJudge()
    with FakeLLMServer(handler=judge) as srv:
        careful = run(
            EXAMPLE,
            agent="python:ui_agents:careful",
            judges=["openai:gpt-4o-mini"],
            judge_options={"base_url": srv.openai_base_url, "api_key": "test"},
        )
        sloppy = run(
            EXAMPLE,
            agent="python:ui_agents:sloppy",
            judges=["anthropic:claude-3-5-sonnet-latest"],
            judge_options={"base_url": srv.anthropic_base_url, "api_key": "test"},
        )
        requests = list(srv.requests)
    assert [p for p, _ in requests] == ["/v1/chat/completions"] * 3 + ["/v1/messages"] * 3
    for path, body in requests:
        (png,) = images_of(body)
        assert Image.open(io.BytesIO(png)).size == (360, 640)  # the phone viewport, from Chromium
        parts = body["messages"][-1]["content"]
        text = parts[0]["text"]
        assert "1. image phone (image/png" in text and "judge it from: the attached image(s)" in text
        if path.endswith("/chat/completions"):
            assert parts[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()
        else:
            assert parts[1]["source"] == {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(png).decode(),
            }

    assert careful.summary().overall.success_rate == 1.0
    assert sloppy.summary().overall.success_rate == 0.0
    for r in careful.results:
        shot = next(g for g in r.grades if g.grader == "screenshot")
        assert shot.passed is True and shot.metrics["dim:contrast"] == 4.0
        assert shot.metrics["attachments"] == 1
    for r in sloppy.results:
        copy, shot = (next(g for g in r.grades if g.grader == n) for n in ("copy", "screenshot"))
        assert copy.passed is True  # the copy is all there; only the screenshot shows the faults
        assert shot.passed is False and shot.veto and shot.category == "veto:text_overflow"
        assert shot.metrics["dim:contrast"] == 1.0 and "text pixels outside the card" in shot.reason
    careful_m, sloppy_m = judge.measurements[:3], judge.measurements[3:]
    assert all(m.ink_outside == 0 and m.contrast > 17 for m in careful_m)
    assert all(m.ink_outside > 100 and m.contrast < 2 for m in sloppy_m)


def test_without_a_judge_the_rule_grader_decides(agents: None) -> None:
    r = run(EXAMPLE, agent="python:ui_agents:sloppy")
    assert r.summary().overall.success_rate == 1.0  # the copy is right; nobody looked at it
    shot = next(g for g in r.results[0].grades if g.grader == "screenshot")
    assert shot.skipped and "no judge model configured" in shot.reason


async def test_rendered_pages_reach_no_network_and_no_file() -> None:
    pytest.importorskip("playwright.async_api")
    red = "onload=\"document.getElementById('x').style.background='#ff0000'\""
    page = (
        "<body style='margin:0'><div id=x style='width:50px;height:50px;background:#00ff00'></div>"
        f"<img src='file:///etc/hostname' {red}>"
        f"<img src='http://127.0.0.1:1/pixel.png' {red}>"  # another origin (nothing listens there)
        "<img src='ok.png' onload=\"document.body.style.background='#0000ff'\"></body>"
    ).encode()
    from PIL import Image

    blue = Image.new("RGB", (2, 2), (0, 0, 255))
    buf = io.BytesIO()
    blue.save(buf, "PNG")
    png = await render_html({"index.html": page, "ok.png": buf.getvalue()}, "index.html", 120, 120)
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.getpixel((10, 10)) == (0, 255, 0)  # neither the file nor the remote image loaded
    assert img.getpixel((100, 100)) == (0, 0, 255)  # the page's own file did
