"""Structured output: JSON validity, JSON Schema, field and enum accuracy, key fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.toydomain import DOMAIN

from assay.core import GraderSpec, Message, Outcome, Reference, Task, ToolCall, Transcript
from assay.graders import (
    build_grader,
    check_grader_spec,
    field_accuracy,
    parse_json_output,
    schema_errors,
    structured_rates,
)

SCHEMA = {
    "type": "object",
    "required": ["category", "priority", "order"],
    "properties": {
        "category": {"enum": ["refund", "cancel", "status"]},
        "priority": {"type": "integer", "minimum": 1, "maximum": 3},
        "order": {"type": "object", "properties": {"id": {"type": "string"}, "status": {"enum": ["a", "b"]}}},
        "summary": {"type": "string"},
    },
}
EXPECTED = {
    "category": "refund",
    "priority": 2,
    "order": {"id": "#W1", "status": "a"},
    "summary": "wants money",
}


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ('{"a": 1}', True),
        ("```json\n[1, 2]\n```", True),
        ("{'a': 1}", False),
        ("Sure: {}", False),
        ("", False),
    ],
)
def test_json_validity(text: str, ok: bool) -> None:
    assert parse_json_output(text).ok is ok


def test_rates_schema_and_fields() -> None:
    outputs = [json.dumps(EXPECTED), json.dumps({**EXPECTED, "priority": 7}), "not json", "{}"]
    rates = structured_rates(outputs, SCHEMA)
    assert rates == {"json_validity_rate": 0.75, "schema_pass_rate": pytest.approx(1 / 3)}
    assert schema_errors({**EXPECTED, "priority": 7}, SCHEMA) == [
        "priority: 7 is greater than the maximum of 3"
    ]
    report = field_accuracy(
        {**EXPECTED, "order": {"id": "#W1", "status": "b"}}, {"order.id": "#W1", "order.status": "a"}
    )
    assert report.correct == ["order.id"] and report.wrong == ["order.status"] and report.accuracy == 0.5


def grade(params: dict, answer: str | None = None, task: Task | None = None, calls=()) -> object:
    messages = [Message("user", "classify this")]
    if calls:
        messages.append(Message("assistant", "", tool_calls=list(calls)))
    if answer is not None:
        messages.append(Message("assistant", answer))
    grader = build_grader(GraderSpec.model_validate({"structured": params}), DOMAIN)
    return grader.grade(task or Task(id="t"), Transcript(messages), Outcome("user_stop"))


def test_structured_grader_key_fields_gate() -> None:
    params = {"schema": SCHEMA, "expected": EXPECTED, "key_fields": ["category"], "min_field_accuracy": 0.5}
    ok = grade(params, json.dumps(EXPECTED))
    assert ok.passed is True and ok.metrics == {
        "json_valid": 1.0,
        "schema_valid": 1.0,
        "field_accuracy": 1.0,
        "enum_accuracy": 1.0,
    }
    # 4 of 5 fields right, but the wrong one is the key field
    wrong_key = grade(params, json.dumps({**EXPECTED, "category": "cancel"}))
    assert wrong_key.passed is False and wrong_key.category == "key_field_wrong"
    assert wrong_key.metrics["field_accuracy"] == 0.8 and wrong_key.metrics["enum_accuracy"] == 0.5
    invalid = grade(params, "{category: refund}")
    assert invalid.passed is False and invalid.category == "invalid_json" and invalid.score == 0.0
    schema_bad = grade(params, json.dumps({**EXPECTED, "priority": "high"}))
    assert schema_bad.passed is False and schema_bad.category == "schema_violation"


def test_the_message_counts_the_fields_right_of_those_expected() -> None:
    params = {"expected": {"category": "refund", "priority": 2}, "min_field_accuracy": 0.5}
    half = grade(params, json.dumps({"category": "refund", "priority": 3}))
    assert half.passed is True and half.reason == "valid structured output, 1 of 2 fields right"
    assert grade({}, "{}").reason == "valid structured output"


def test_a_state_grader_on_a_domain_without_tools_is_a_suite_mistake() -> None:
    from assay.envs.environment import NO_DOMAIN

    spec = GraderSpec.model_validate("state")
    assert check_grader_spec(spec, NO_DOMAIN, Task(id="t")) == [
        ((), "a state grader needs a domain with tools and state; domain 'none' has none")
    ]
    assert check_grader_spec(spec, DOMAIN, Task(id="t")) == []


def test_expected_from_reference_and_tool_arguments() -> None:
    task = Task(id="t", reference=Reference(answer=json.dumps({"category": "refund"})))
    assert grade({}, '{"category": "refund", "x": 1}', task).passed is True
    assert grade({}, '{"category": "status"}', task).passed is False
    call = ToolCall("c1", "get_balance", {"account_id": "A1"})
    assert grade({"tool": "get_balance", "expected": {"account_id": "A1"}}, None, calls=[call]).passed is True
    assert grade({"tool": "deposit"}, None, calls=[call]).category == "invalid_json"
    assert grade({"key_fields": ["a"]}, "{}").skipped


def test_schema_problems_are_reported_by_validate(tmp_path: Path) -> None:
    task = Task(id="t")
    bad = GraderSpec.model_validate({"structured": {"schema": {"type": "objectx"}}})
    assert "invalid JSON Schema" in check_grader_spec(bad, DOMAIN, task)[0][1]
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    by_file = GraderSpec.model_validate({"structured": {"schema": str(tmp_path / "s.json")}})
    assert check_grader_spec(by_file, DOMAIN, task) == []
    missing = GraderSpec.model_validate({"structured": {"schema": "nope.json"}})
    assert "file not found" in check_grader_spec(missing, DOMAIN, task)[0][1]
    assert (
        "unknown tool"
        in check_grader_spec(GraderSpec.model_validate({"structured": {"tool": "nope"}}), DOMAIN, task)[0][1]
    )
