"""The attribute names assay exports are the conventions' own: every OpenInference name
in :mod:`assay.traces.semconv` equals the ``openinference-semantic-conventions``
constant of the same name, and every OpenInference, GenAI and exception attribute an
exported LLM-agent trial carries is a name those packages define (a drift check: a
mistyped or renamed attribute fails here, not in a backend's UI)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

semconv = pytest.importorskip("openinference.semconv.trace")
from openinference.semconv.resource import ResourceAttributes  # noqa: E402
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes  # noqa: E402
from opentelemetry.semconv.attributes.exception_attributes import EXCEPTION_MESSAGE  # noqa: E402

from assay.traces import TraceExporter, run_span, trial_spans  # noqa: E402
from assay.traces import semconv as mirror  # noqa: E402
from tests.support.fake_llm_server import FakeLLMServer  # noqa: E402

from .conftest import llm_run  # noqa: E402

MIRRORED = ("SpanAttributes", "MessageAttributes", "ToolCallAttributes")


def _constants(cls: type) -> dict[str, str]:
    return {k: v for k, v in vars(cls).items() if k.isupper() and isinstance(v, str)}


def test_every_mirrored_name_is_the_package_constant() -> None:
    for name in MIRRORED:
        ours, theirs = getattr(mirror, name), getattr(semconv, name)
        for constant, value in _constants(ours).items():
            assert getattr(theirs, constant, None) == value, f"{name}.{constant}"
    kinds = semconv.OpenInferenceSpanKindValues
    for constant, value in _constants(mirror.OpenInferenceSpanKindValues).items():
        assert kinds[constant].value == value, constant


def _known() -> tuple[set[str], set[str], set[str]]:
    span = set(_constants(semconv.SpanAttributes).values())
    message = set(_constants(semconv.MessageAttributes).values())
    call = set(_constants(semconv.ToolCallAttributes).values())
    return span, message, call


_MESSAGE = re.compile(r"^(llm\.input_messages|llm\.output_messages)\.\d+\.(.+)$")
_CALL = re.compile(r"^message\.tool_calls\.\d+\.(.+)$")


def _unknown_openinference(key: str) -> bool:
    """Whether ``key`` (not assay's, GenAI's or an exception's) is no OpenInference name."""
    span, message, call = _known()
    if key in span:
        return False
    m = _MESSAGE.match(key)
    if m is None:
        return True
    rest = m.group(2)
    c = _CALL.match(rest)
    return rest not in message if c is None else c.group(1) not in call


def test_every_attribute_an_exported_trial_carries_is_a_convention(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    run = llm_run(llm_server, tmp_path, run_id="semconv")
    gen_ai = {v for k, v in vars(gen_ai_attributes).items() if k.isupper() and isinstance(v, str)}
    kinds = {k.value for k in semconv.OpenInferenceSpanKindValues}
    seen: set[str] = set()
    problems: list[str] = []
    spans = [run_span(run.info, run.results)]
    for r in run.results:
        spans.extend(trial_spans(run.info, r, run.transcript(r.task_id, r.trial_index)).spans)
    # a provider that reports cache reads (the fake endpoint does not): one trial again
    first = run.results[0]
    cached = copy.deepcopy(run.transcript(first.task_id, first.trial_index))
    assert cached is not None
    for s in cached.spans:
        if s.kind == "llm":
            s.attributes["cache_read_tokens"] = 7
    spans.extend(trial_spans(run.info, first, cached).spans)
    for span in spans:
        attributes: dict[str, Any] = span.all_attributes()
        for key in attributes:
            seen.add(key)
            if key.startswith("assay."):
                continue
            if key.startswith("gen_ai."):
                if key not in gen_ai:
                    problems.append(f"{span.kind}: {key} is no OpenTelemetry GenAI attribute")
            elif key.startswith("exception."):
                if key != EXCEPTION_MESSAGE:
                    problems.append(f"{span.kind}: {key} is no OpenTelemetry exception attribute")
            elif _unknown_openinference(key):
                problems.append(f"{span.kind}: {key} is no OpenInference attribute")
        kind = attributes[semconv.SpanAttributes.OPENINFERENCE_SPAN_KIND]
        if kind not in kinds:
            problems.append(f"{span.kind}: span kind {kind!r} is no OpenInference span kind")
    assert problems == []
    # the trials went through every path that writes OpenInference names
    sa = semconv.SpanAttributes
    written = set(_constants(mirror.SpanAttributes).values()) - {sa.LLM_TOOLS}  # read only
    flattened = [m for m in map(_MESSAGE.match, seen) if m is not None]
    assert written - seen - {m.group(1) for m in flattened} == set()
    message_keys = {m.group(2) for m in flattened}
    assert {"message.role", "message.content", "message.tool_call_id"} <= message_keys
    assert any(_CALL.match(k) for k in message_keys)


def test_the_resource_names_the_phoenix_project_by_the_package_constant(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    run = llm_run(llm_server, tmp_path, task_ids=["cancel-pending"], run_id="project")
    target = tmp_path / "run.otlp.jsonl"
    exporter = TraceExporter(path=target, project="my-evals")
    exporter.add(run.info, run.results[0])
    exporter.close()
    resources = [
        rs["resource"] for line in target.read_text().splitlines() for rs in json.loads(line)["resourceSpans"]
    ]
    values = [{a["key"]: a["value"].get("stringValue") for a in r["attributes"]} for r in resources]
    assert values and all(v[ResourceAttributes.PROJECT_NAME] == "my-evals" for v in values)


def test_reading_traces_needs_no_openinference_package_and_exporting_names_the_extra(
    tmp_path: Path,
) -> None:
    """The names are plain strings where the otel extra may be missing: import and replay
    of traces work without the package; exporting says which extra to install."""
    code = """
import sys
for name in ("openinference", "openinference.semconv", "openinference.semconv.trace",
             "openinference.semconv.resource"):
    sys.modules[name] = None  # as if not installed
from assay.traces import TraceExporter
from assay.traces.conversations import conversations_of_spans
from assay.traces.readers import read_file
from assay.traces.prompts import prompt_diff
try:
    TraceExporter(path=sys.argv[1])
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "x.jsonl")], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("OtelMissing exporting traces needs the otel extra")
    assert "pip install 'assay[otel]'" in out.stdout
