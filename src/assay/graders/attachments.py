"""What a judge looks at besides text: images and audio of the trial or of the suite.

A judge's ``attach`` list names them::

    attach:
      - screenshots/*.png                      # files the trial left in its workspace (glob)
      - {workspace: out/answer.wav}            # the same, long form
      - {suite: mocks/design.png}              # a file of the suite (relative to its folder)
      - {render: answer, width: 360, height: 640}   # the HTML of the agent's answer, rendered
      - {render: site/index.html}              # an HTML file of the workspace, rendered

Files are read from the trial's final state (its ``files`` table, where binary files are
kept base64, up to 512 KB each), so they are exactly what the trial produced. Rendering
takes a screenshot in headless Chromium (:mod:`.render`). The media type comes from the
file's first bytes (PNG, JPEG, GIF, WebP, WAV, MP3), never from its name.

Whose fault a missing attachment is decides the grade: a file the trial should have
produced and did not (or that is not an image or audio file) fails the grade; a limit of
the harness (a file too large to keep, no Chromium, a page that does not render) skips
it with the reason.
"""

from __future__ import annotations

import base64
import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..core.messages import MEDIA_TYPES, Media
from ..core.results import Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..envs.sandbox.workspace import clean_path, file_rows
from .base import PathKey
from .files import GraderFileError, resolve_file
from .rubric import Rubric

#: The largest attachment sent to a judge (providers take about 20 MB per image).
MAX_ATTACHMENT_BYTES = 20 << 20
_HTML_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


class Attach(BaseModel):
    """One entry of ``attach``: exactly one of ``workspace``, ``suite``, ``render``."""

    model_config = ConfigDict(extra="forbid")
    workspace: str | None = Field(None, description="path or glob in the trial's workspace")
    suite: str | None = Field(None, description="a file of the suite (relative to its folder)")
    render: str | None = Field(None, description="'answer' or an HTML file of the workspace")
    width: int = Field(1280, ge=64, le=4096, description="render: viewport width (CSS pixels)")
    height: int = Field(800, ge=64, le=4096, description="render: viewport height")
    full_page: bool = Field(False, description="render: the whole page, not only the viewport")
    name: str | None = Field(None, description="the name the judge reads (default: the path)")

    @model_validator(mode="before")
    @classmethod
    def _short(cls, data: Any) -> Any:
        return {"workspace": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _one_source(self) -> Attach:
        given = [k for k in ("workspace", "suite", "render") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of workspace, suite or render")
        for key in ("workspace", "suite"):
            value = getattr(self, key)
            if value is not None:
                setattr(self, key, clean_path(value))
        if self.render is not None and self.render != "answer":
            self.render = clean_path(self.render)
        return self

    @property
    def label(self) -> str:
        return str(self.workspace or self.suite or self.render)


@dataclass
class Collected:
    """The attachments of one trial, or why they could not all be had. ``fault`` is
    ``agent`` when the trial did not produce what was asked (the grade fails) and
    ``harness`` when a limit of assay got in the way (the grade is skipped)."""

    media: list[Media] = field(default_factory=list)
    problem: str | None = None
    fault: Literal["agent", "harness"] | None = None


class _Problem(Exception):
    def __init__(self, reason: str, fault: Literal["agent", "harness"]):
        super().__init__(reason)
        self.fault = fault


def media_type_of(data: bytes) -> str | None:
    """The media type of a file, from its first bytes (never its name: a file named
    ``.png`` that is not a PNG is not sent as one); None when it is none of these."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "audio/mpeg"
    return None


def to_media(data: bytes, name: str, fault: Literal["agent", "harness"] = "agent") -> Media:
    if len(data) > MAX_ATTACHMENT_BYTES:
        limit = MAX_ATTACHMENT_BYTES >> 20
        raise _Problem(f"{name} is {len(data) >> 20} MB, above the {limit} MB limit", "harness")
    media_type = media_type_of(data)
    if media_type is None or media_type not in MEDIA_TYPES:
        kinds = "PNG, JPEG, GIF, WebP, WAV or MP3"
        raise _Problem(f"{name} is not an image or audio file a judge can take ({kinds})", fault)
    return Media(media_type, data, name)


def html_of(answer: str) -> str | None:
    """The HTML of an answer: its ``html`` code block (else its first code block), else
    the answer itself when it looks like markup; None when there is none."""
    blocks = _HTML_FENCE.findall(answer)
    if blocks:
        html = [body for lang, body in blocks if lang.lower() in ("html", "htm")]
        return (html or [blocks[0][1]])[0]
    text = answer.strip()
    return text if text.startswith("<") and text.endswith(">") else None


def _records(outcome: Outcome) -> dict[str, dict[str, Any]]:
    return {str(r.get("path")): r for r in file_rows(outcome.final_state)}


def _record_bytes(record: dict[str, Any]) -> bytes:
    path = record.get("path")
    if "omitted" in record:
        raise _Problem(f"{path} was not kept in the trial's state ({record['omitted']})", "harness")
    if "content_base64" in record:
        return base64.b64decode(str(record["content_base64"]))
    if "symlink" in record:
        raise _Problem(f"{path} is a symbolic link, not a file", "agent")
    return str(record.get("content", "")).encode("utf-8")


def _workspace(spec: Attach, files: dict[str, dict[str, Any]]) -> list[Media]:
    pattern = str(spec.workspace)
    paths = sorted(p for p in files if fnmatch.fnmatchcase(p, pattern))
    if not paths:
        raise _Problem(f"the trial left no file matching {pattern} in its workspace", "agent")
    out = []
    for path in paths:
        name = spec.name if spec.name and len(paths) == 1 else path
        out.append(to_media(_record_bytes(files[path]), name))
    return out


def _suite(spec: Attach, task: Task) -> Media:
    try:
        path = resolve_file(str(spec.suite), task)
    except GraderFileError as exc:
        raise _Problem(str(exc), "harness") from None
    return to_media(path.read_bytes(), spec.name or str(spec.suite), "harness")


async def _render(spec: Attach, transcript: Transcript, files: dict[str, dict[str, Any]]) -> Media:
    from .render import RenderUnavailable, render_html

    target = str(spec.render)
    site: dict[str, bytes] = {}
    if target == "answer":
        texts = transcript.agent_texts()
        html = html_of(texts[-1]) if texts else None
        if html is None:
            raise _Problem("the agent's final answer holds no HTML to render", "agent")
        site["index.html"] = html.encode("utf-8")
        page = "index.html"
    else:
        if target not in files:
            raise _Problem(f"the trial left no {target} in its workspace to render", "agent")
        site = {p: _record_bytes(r) for p, r in files.items() if "omitted" not in r and "symlink" not in r}
        page = target
    try:
        png = await render_html(site, page, spec.width, spec.height, spec.full_page)
    except RenderUnavailable as exc:
        raise _Problem(str(exc), "harness") from None
    name = spec.name or f"{target}@{spec.width}x{spec.height}.png"
    return Media("image/png", png, name)


async def for_rubric(
    specs: list[Attach], rubric: Rubric, task: Task, transcript: Transcript, outcome: Outcome
) -> Collected:
    """The attachments of ``specs`` a dimension of ``rubric`` looks at; a problem (the
    agent's) when a modality some dimension looks at has no attachment."""
    got = await collect(specs, task, transcript, outcome)
    if got.problem is not None:
        return got
    got.media = [m for m in got.media if m.kind in rubric.media_kinds]
    missing = sorted(rubric.media_kinds - {m.kind for m in got.media})
    if missing:
        names = ", ".join(d.name for d in rubric.dimensions if set(d.looks_at) & set(missing))
        return Collected(got.media, f"no {' or '.join(missing)} attachment to judge {names} from", "agent")
    return got


def modalities_of(model: Any) -> frozenset[str]:
    """What a judge model's wire format can carry (text only when it does not say)."""
    return frozenset(getattr(model, "modalities", ("text",)))


def attach_problems(specs: list[Attach], rubric: Rubric, task: Task) -> list[tuple[PathKey, str]]:
    """``attach`` against the rubric (for ``assay validate``): media some dimension looks
    at must be attached, attachments must be looked at, suite files must exist."""
    problems: list[tuple[PathKey, str]] = []
    if rubric.media_kinds and not specs:
        names = ", ".join(d.name for d in rubric.dimensions if set(d.looks_at) - {"text"})
        kinds = " and ".join(sorted(rubric.media_kinds))
        problems.append((("attach",), f"dimension(s) {names} look at {kinds}, but nothing is attached"))
    if specs and not rubric.media_kinds:
        problems.append((("attach",), "no rubric dimension looks at an image or audio (looks_at)"))
    for i, spec in enumerate(specs):
        if spec.suite is not None:
            try:
                resolve_file(spec.suite, task)
            except GraderFileError as exc:
                problems += [(("attach", i, "suite"), str(p)) for p in exc.problems]
        if spec.render is not None and "image" not in rubric.media_kinds:
            problems.append((("attach", i, "render"), "renders an image, but no dimension looks at images"))
    return problems


async def collect(specs: list[Attach], task: Task, transcript: Transcript, outcome: Outcome) -> Collected:
    """Every attachment of ``specs``, in order, or the first problem met."""
    from_workspace = any(s.workspace or (s.render and s.render != "answer") for s in specs)
    files = _records(outcome) if from_workspace else {}
    out = Collected()
    try:
        for spec in specs:
            if spec.workspace is not None:
                out.media.extend(_workspace(spec, files))
            elif spec.suite is not None:
                out.media.append(_suite(spec, task))
            else:
                out.media.append(await _render(spec, transcript, files))
    except _Problem as exc:
        return Collected(out.media, str(exc), exc.fault)
    return out
