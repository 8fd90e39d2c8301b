"""The Redactor: pseudonyms consistent within a record, counts without values, JSON walking,
key context, per-kind config, known secrets, custom patterns."""

from __future__ import annotations

import json
import re

import pytest

from assay.redact import RedactConfigError, Redactor

EMAIL_A, EMAIL_B = "ann.lee@example.org", "bo.kim@example.net"
CARD = "4111 1111 1111 1111"


def test_same_value_same_pseudonym_different_values_different_numbers() -> None:
    record = {
        "messages": [
            {"role": "user", "content": f"I'm {EMAIL_A}, my friend is {EMAIL_B}"},
            {
                "role": "assistant",
                "content": f"Noted {EMAIL_A.upper()}.",
            },  # emails compare case-insensitively
        ],
        "tool": json.dumps({"email": EMAIL_A}),
    }
    out = Redactor().redact(record)
    assert out.value["messages"][0]["content"] == "I'm <EMAIL_1>, my friend is <EMAIL_2>"
    assert out.value["messages"][1]["content"] == "Noted <EMAIL_1>."
    assert json.loads(out.value["tool"]) == {"email": "<EMAIL_1>"}
    assert out.counts == {"EMAIL": 4}
    assert out.distinct == {"EMAIL": 2}
    assert out.redacted


def test_pseudonyms_restart_per_record_and_carry_across_a_session() -> None:
    r = Redactor()
    assert r.redact(f"x {EMAIL_B}").value == "x <EMAIL_1>"
    assert r.redact(f"y {EMAIL_A}").value == "y <EMAIL_1>"  # a new record: numbering restarts
    session = r.session()
    assert session.redact(f"a {EMAIL_A}") == "a <EMAIL_1>"
    assert session.redact(f"b {EMAIL_B} {EMAIL_A}") == "b <EMAIL_2> <EMAIL_1>"
    assert session.counts == {"EMAIL": 3}


def test_counts_never_hold_values() -> None:
    out = Redactor().redact({"a": f"card {CARD}", "b": "Authorization: Bearer 9f8e7d6c5b4a39281706a1b2c3d4"})
    summary = json.dumps(out.summary())
    assert "4111" not in summary and "9f8e7d" not in summary
    assert out.summary() == {
        "redacted": True,
        "total": 2,
        "counts": {"AUTH_TOKEN": 1, "CARD": 1},
        "distinct": {"AUTH_TOKEN": 1, "CARD": 1},
    }


def test_nothing_found_leaves_the_object_equal() -> None:
    record = {"order_id": "#W1234567", "total": 447.49, "items": [1, 2], "ok": True, "none": None}
    out = Redactor().redact(record)
    assert out.value == record and not out.redacted and out.counts == {}


def test_keys_are_kept_but_read() -> None:
    record = {
        "api_key": "plain-looking-value",  # only the key says it is a secret
        "headers": {"Authorization": "whatever123", "X-Api-Key": "abc12345"},
        "max_tokens": 512,
        "token_count": 7,
        "user": {"first_name": "Ada", "phone": "555 0134"},
        "note": "Ada called back",
        f"{EMAIL_A}": "key that is an email",
    }
    out = Redactor().redact(record).value
    assert out["api_key"] == "<SECRET_1>"
    assert out["headers"] == {"Authorization": "<SECRET_2>", "X-Api-Key": "<SECRET_3>"}
    assert out["max_tokens"] == 512 and out["token_count"] == 7
    assert out["user"] == {"first_name": "<PERSON_NAME_1>", "phone": "<PHONE_1>"}
    assert out["note"] == "<PERSON_NAME_1> called back"  # a name under a name key, repeated
    assert EMAIL_A in out  # keys are left alone by default
    keyed = Redactor({"redact_keys": True}).redact(record).value
    assert EMAIL_A not in keyed and "<EMAIL_1>" in keyed


def test_large_integers_are_checked_and_small_ones_kept() -> None:
    out = Redactor().redact({"card": 4111111111111111, "qty": 3, "order": 1234567, "pin": 1234})
    assert out.value == {"card": "<CARD_1>", "qty": 3, "order": 1234567, "pin": 1234}
    secret = Redactor().redact({"password": 123456}).value
    assert secret == {"password": "<SECRET_1>"}


def test_tuples_and_nested_lists() -> None:
    out = Redactor().redact(("x", [f"a {EMAIL_A}", [f"b {EMAIL_A}"]]))
    assert out.value == ("x", ["a <EMAIL_1>", ["b <EMAIL_1>"]])


def test_redacting_twice_changes_nothing_more() -> None:
    record = {
        "text": f"{EMAIL_A} {CARD} api_key=q8Jt2LmZ0pW4 https://u:pw12345@h.io",
        "password": "hunter22",
    }
    r = Redactor()
    once = r.redact(record)
    twice = r.redact(once.value)
    assert twice.value == once.value and not twice.redacted


def test_kind_switches_and_styles() -> None:
    text = f"{EMAIL_A} and 203.0.113.7 and {CARD}"
    assert (
        Redactor({"kinds": {"IP_ADDRESS": False}}).redact(text).value
        == "<EMAIL_1> and 203.0.113.7 and <CARD_1>"
    )
    labelled = Redactor({"style": "label", "kinds": {"CARD": {"style": "mask"}}}).redact(text).value
    assert labelled == "<EMAIL> and <IP_ADDRESS> and [REDACTED]"
    assert Redactor({"personal": False}).redact(text).value == text
    assert Redactor({"placeholder": "[{kind}#{n}]"}).redact(text).value.startswith("[EMAIL#1]")


def test_hash_style_is_stable_across_records_and_keyed() -> None:
    a = Redactor({"style": "hash", "salt": "s1"})
    first, second = a.redact(f"x {EMAIL_A}").value, a.redact(f"y {EMAIL_A}").value
    assert re.fullmatch(r"x <EMAIL_[0-9a-f]{12}>", first)
    assert first[2:] == second[2:]  # same value, same hash, in different records
    other = Redactor({"style": "hash", "salt": "s2"}).redact(f"x {EMAIL_A}").value
    assert other != first
    with pytest.raises(RedactConfigError, match="salt"):
        Redactor({"style": "hash"})


def test_custom_patterns_with_validators() -> None:
    cfg = {
        "patterns": [
            {"name": "EMPLOYEE_ID", "regex": r"EMP-\d{6}"},
            {
                "name": "LOYALTY",
                "regex": r"LOY(\d{16})",
                "group": 1,
                "validator": "luhn",
                "category": "personal",
            },
        ]
    }
    r = Redactor(cfg)
    out = r.redact("EMP-123456 LOY4111111111111111 LOY4111111111111112")
    assert out.value == "<EMPLOYEE_ID_1> LOY<LOYALTY_1> LOY4111111111111112"
    assert Redactor({**cfg, "personal": False}).redact("LOY4111111111111111").value == "LOY4111111111111111"


def test_allow_list_and_extra_keys() -> None:
    r = Redactor(
        {
            "allow": ["support@example.com"],
            "secret_keys": ["x_internal"],
            "key_kinds": {"customer_ref": "CUSTOMER"},
        }
    )
    out = r.redact({"to": "support@example.com or ann@x.org", "x_internal": "zz-91", "customer_ref": "C-991"})
    assert out.value == {
        "to": "support@example.com or <EMAIL_1>",
        "x_internal": "<SECRET_1>",
        "customer_ref": "<CUSTOMER_1>",
    }


def test_known_secrets_are_removed_with_their_echoes() -> None:
    key = "sk-test-abcdefghijklmnopqrstuvwx1234"
    r = Redactor(secrets=[key, "", None])  # type: ignore[list-item]
    out = r.redact(
        {
            "error": f"401 Incorrect API key provided: sk-test-************************1234. ({key})",
            "log": "retrying with key sk-...1234",
        }
    ).value
    assert "1234" not in json.dumps(out) and "abcdefgh" not in json.dumps(out)


def test_config_errors_are_assay_errors() -> None:
    with pytest.raises(RedactConfigError, match=r"kinds\.NOPE: unknown kind"):
        Redactor({"kinds": {"NOPE": False}})
    with pytest.raises(RedactConfigError, match="invalid regular expression"):
        Redactor({"patterns": [{"name": "X", "regex": "("}]})
    with pytest.raises(RedactConfigError, match="unknown field"):
        Redactor({"colour": "blue"})
    with pytest.raises(RedactConfigError, match="must contain"):
        Redactor({"placeholder": "<{kind}>"})


def test_parts_of_a_record_get_their_own_flags_and_shared_pseudonyms() -> None:
    session = Redactor().session()
    first = session.redact_part({"name": "llm", "attributes": {"input": f"mail {EMAIL_A}"}})
    plain = session.redact_part({"name": "tool", "attributes": {"output": "ok"}})
    again = session.redact_part({"name": "user", "attributes": {"text": f"{EMAIL_B} / {EMAIL_A}"}})
    assert first.redacted and first.counts == {"EMAIL": 1}
    assert not plain.redacted and plain.counts == {}
    assert again.value["attributes"]["text"] == "<EMAIL_2> / <EMAIL_1>" and again.counts == {"EMAIL": 2}
    assert session.counts == {"EMAIL": 3}


def test_objects_that_are_not_json_like_are_refused() -> None:
    from dataclasses import dataclass

    @dataclass
    class Span:
        text: str

    r = Redactor()
    for obj in (Span(EMAIL_A), {"raw": EMAIL_A.encode()}):
        with pytest.raises(TypeError, match="JSON-like"):
            r.redact(obj)


def test_without_detect_secrets_the_built_in_detectors_still_run(monkeypatch) -> None:
    import sys

    from assay.redact import detectsecrets, kinds

    for name in [m for m in sys.modules if m.startswith("detect_secrets")]:
        monkeypatch.setitem(sys.modules, name, None)  # importing it now raises ImportError
    monkeypatch.setitem(sys.modules, "detect_secrets", None)
    detectsecrets.detect_secrets_detectors.cache_clear()
    kinds.detect_secrets_kinds.cache_clear()
    try:
        r = Redactor()
        assert all(d.source != "detect-secrets" for d in r.detectors)
        assert "STRIPE_ACCESS_KEY" not in r.kinds
        out = r.redact(f"{EMAIL_A} ghp_{'a1B2c3D4e5' * 3}F6g7h8 STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc")
        assert out.counts == {"EMAIL": 1, "GITHUB_TOKEN": 1}
    finally:
        detectsecrets.detect_secrets_detectors.cache_clear()
        kinds.detect_secrets_kinds.cache_clear()
    monkeypatch.undo()
    assert "STRIPE_ACCESS_KEY" in Redactor().kinds
