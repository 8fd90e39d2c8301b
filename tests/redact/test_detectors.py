"""Each detector on values it must find (with the exact span) and on look-alikes it must
leave alone: order ids, ISO dates, prices, UUIDs, git hashes, tool names, code."""

from __future__ import annotations

import pytest

from assay.redact import Redactor

R = Redactor()


def found(text: str) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in R.find(text)]


JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
    "4lgOEePzNm0tRgeLezV6ffAt\n-----END RSA PRIVATE KEY-----"
)

POSITIVES = [
    # secrets
    (
        "key sk-proj-Ab3dEf6hIjKlMnOpQrStUvWxYz0123456789abcd ok",
        "OPENAI_KEY",
        "sk-proj-Ab3dEf6hIjKlMnOpQrStUvWxYz0123456789abcd",
    ),
    (
        "OPENAI_API_KEY=sk-Z1x2C3v4B5n6M7a8S9d0F1g2H3j4K5l6",
        "OPENAI_KEY",
        "sk-Z1x2C3v4B5n6M7a8S9d0F1g2H3j4K5l6",
    ),
    ("use sk-ant-api03-" + "aB3" * 30 + "AA now", "ANTHROPIC_KEY", "sk-ant-api03-" + "aB3" * 30 + "AA"),
    ("id AKIAIOSFODNN7EXAMPLE here", "AWS_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_SECRET_KEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("token ghp_" + "a1B2c3D4e5" * 3 + "F6g7h8 leaked", "GITHUB_TOKEN", "ghp_" + "a1B2c3D4e5" * 3 + "F6g7h8"),
    (
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "SLACK_TOKEN",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "maps key=AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "GOOGLE_API_KEY",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    ),
    (f"cookie jwt {JWT}", "JWT", JWT),
    (f"key:\n{PEM}\nend", "PRIVATE_KEY", PEM),
    ("Authorization: Bearer 9f8e7d6c5b4a39281706a1b2c3d4", "AUTH_TOKEN", "9f8e7d6c5b4a39281706a1b2c3d4"),
    ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "AUTH_TOKEN", "YWxhZGRpbjpvcGVuc2VzYW1l"),
    ("postgres://app:S3cr3t!pw@db.internal:5432/x", "URL_PASSWORD", "S3cr3t!pw"),
    ("api_key=q8Jt2LmZ0pW4", "SECRET", "q8Jt2LmZ0pW4"),
    ('{"password": "correct horse battery"}', "SECRET", "correct horse battery"),
    ("DB_PASSWORD='hunter2'", "SECRET", "hunter2"),
    ("mytool --api-key Zq81xTw0Lp", "SECRET", "Zq81xTw0Lp"),
    ("STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "STRIPE_ACCESS_KEY", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    # personal data
    ("mail Jane.Doe+shop@mail.example.co.uk, thanks", "EMAIL", "Jane.Doe+shop@mail.example.co.uk"),
    ("KeyError: {'email': 'ann@x.org'}", "EMAIL", "ann@x.org"),
    ("GET /users?email=ann@x.org&page=2", "EMAIL", "ann@x.org"),
    ("mailto:ann@x.org", "EMAIL", "ann@x.org"),
    ("call (415) 555-0134 now", "PHONE", "(415) 555-0134"),
    ("call +44 (0)20 7946 0958 now", "PHONE", "+44 (0)20 7946 0958"),
    ("ring 07700 900123 today", "PHONE", "07700 900123"),
    ("tel 01 23 45 67 89", "PHONE", "01 23 45 67 89"),
    ("phone: 4155550134", "PHONE", "4155550134"),
    ("card 4111 1111 1111 1111 exp 09/27", "CARD", "4111 1111 1111 1111"),
    ("amex 3782-822463-10005", "CARD", "3782-822463-10005"),
    ("IBAN DE89 3704 0044 0532 0130 00 EUR", "IBAN", "DE89 3704 0044 0532 0130 00"),
    ("to GB82WEST12345698765432.", "IBAN", "GB82WEST12345698765432"),
    ("SSN 123-45-6789", "SSN", "123-45-6789"),
    ("ssn: 123456789", "SSN", "123456789"),
    ("NI AB 12 34 56 C ok", "NINO", "AB 12 34 56 C"),
    ("DNI 12345678Z", "DNI", "12345678Z"),
    ("NIE X1234567L", "DNI", "X1234567L"),
    ("CPF 529.982.247-25", "CPF", "529.982.247-25"),
    (
        "at 1600 Pennsylvania Avenue NW, Washington, DC 20500.",
        "ADDRESS",
        "1600 Pennsylvania Avenue NW, Washington, DC 20500",
    ),
    ("to 221B Baker Street, London NW1 6XE", "ADDRESS", "221B Baker Street, London NW1 6XE"),
    ("Hauptstraße 12, 10115 Berlin", "ADDRESS", "Hauptstraße 12, 10115 Berlin"),
    ("12 rue de la Paix, 75002 Paris", "ADDRESS", "12 rue de la Paix, 75002 Paris"),
    ("PO Box 4521", "ADDRESS", "PO Box 4521"),
    ("from 203.0.113.7:443", "IP_ADDRESS", "203.0.113.7"),
    ("from 2001:db8:85a3::8a2e:370:7334 now", "IP_ADDRESS", "2001:db8:85a3::8a2e:370:7334"),
]


@pytest.mark.parametrize(
    ("text", "kind", "value"), POSITIVES, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(POSITIVES)]
)
def test_detects(text: str, kind: str, value: str) -> None:
    assert (kind, value) in found(text)


NEGATIVES = [
    "order #W1234567 and #W7151547",
    "placed on 2025-06-14, delivered 2025-06-08T12:30:45Z",
    "total $447.49, refund of 1,299.00 USD, 0.25 0.50",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "commit 3f2a91c0d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9 (3f2a91c)",
    "tools: get_order_details, find_user_id_by_email, find_user_id_by_name_zip",
    "product P979404, user samuel_wilson_8710, refund R-0001, transfer T-0003",
    "zip 47915, 12:30:45, python 3.11.4, version v1.2.3.4",
    "call_5_0 call_12_1",
    "max_tokens=512 input_tokens: 1024 token_count: 5 completion_tokens=77",
    "icon@2x.png logo@3x.svg",
    "card 4111 1111 1111 1112",  # Luhn fails
    "IBAN DE89 3704 0044 0532 0130 01",  # mod-97 fails
    "ssn 000-12-3456 and 666-12-3456",
    "api_key=<API_KEY> token=${TOKEN} password: ******** secret: None",
    "api_key: str | None = None; self.api_key = api_key; token = m.group",
    "Authorization: Bearer <token>",
    "pass: true, auth: false, the secret: keep it simple",
    "timestamp 1718000000 and 1718000000123",
    "latitude 37.7749, longitude -122.4194, pi 3.14159",
    "color #FF5733, 100% done, 3/4 cups",
    "ISBN 978-3-16-148410-0",
    "localhost 127.0.0.1 and 0.0.0.0 and ::1",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_leaves_look_alikes_alone(text: str) -> None:
    assert found(text) == []


def test_overlapping_findings_resolve_to_the_longest_then_most_specific() -> None:
    text = "OPENAI_API_KEY=sk-proj-Ab3dEf6hIjKlMnOpQrStUvWxYz0123456789abcd"
    # the assignment rule and the OpenAI format find the same value: the specific kind wins
    assert found(text) == [("OPENAI_KEY", "sk-proj-Ab3dEf6hIjKlMnOpQrStUvWxYz0123456789abcd")]


def test_a_failed_candidate_does_not_hide_a_real_value() -> None:
    # a longer digit run that fails the card check must not swallow the card after it
    assert ("CARD", "4111111111111111") in found("ref 12 4111111111111111")
    # an IBAN whose regex match runs into the next word is cut to its country's length
    assert ("IBAN", "BE68 5390 0754 7034") in found("pay BE68 5390 0754 7034 THEN stop")


def test_json_escaped_text_inside_a_tool_output() -> None:
    text = '{"address": "Berliner Stra\\u00dfe 44", "note": "call +49 30 12345678"}'
    kinds = [k for k, _ in found(text)]
    assert kinds == ["ADDRESS", "PHONE"]
