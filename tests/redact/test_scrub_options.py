"""scrub() on error messages that quote keys, and which option names carry secrets."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from assay.redact import is_secret_option, mask_options, scrub, secret_values

KEY = "sk-proj-Q1w2E3r4T5y6U7i8O9p0AsDfGhJkL9x8"


@pytest.mark.parametrize(
    "message",
    [
        f"Error code: 401 - Incorrect API key provided: {KEY}.",
        "Incorrect API key provided: sk-proj-**************************9x8. You can find...",
        "invalid key sk-...L9x8",
        "key ending in ****L9x8 was revoked",
        "key sk-proj-Q1w2E3r4T5y6…",  # truncated with an ellipsis
        f"GET /v1?key={quote(KEY, safe='')} failed",
        f"body: {json.dumps({'key': KEY})}",
        "truncated quote: Q1w2E3r4T5y6U7i8 (16 chars of it)",
        "masked with x: sk-proj-xxxxxxxxxxxxxxxxxxxxxxL9x8",
    ],
)
def test_scrub_removes_the_secret_and_its_echoes(message: str) -> None:
    out = scrub(message, [KEY])
    assert "<SECRET>" in out
    for fragment in ("L9x8", "Q1w2E3r4T5y6"):
        assert fragment not in out, out


def test_scrub_leaves_other_text_alone() -> None:
    text = "Loading... done. sk-... prefixes are OpenAI keys; ******** hides a password."
    assert scrub(text, [KEY]) == text
    assert scrub("short abc", ["abc"]) == "short abc"  # too short to be treated as a secret
    assert scrub("nothing", []) == "nothing"
    assert scrub("x", [None, ""]) == "x"


def test_scrub_custom_replacement_and_several_secrets() -> None:
    other = "ghp_" + "Z" * 36
    out = scrub(f"a {KEY} b {other} c", [KEY, other], replacement="[hidden]")
    assert out == "a [hidden] b [hidden] c"


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apiKey",
        "OPENAI_API_KEY",
        "x-api-key",
        "token",
        "access_token",
        "password",
        "db_password",
        "passwd",
        "secret",
        "client_secret",
        "Authorization",
        "Proxy-Authorization",
        "credentials",
        "cookie",
        "aws_secret_access_key",
        "private_key",
        "dsn",
    ],
)
def test_secret_option_names(name: str) -> None:
    assert is_secret_option(name)


@pytest.mark.parametrize(
    "name",
    [
        "max_tokens",
        "token_count",
        "input_tokens",
        "api_key_env",
        "base_url",
        "temperature",
        "keyboard",
        "bypass",
        "compass",
        "secretary_name",
        "password_policy",
        "model",
    ],
)
def test_ordinary_option_names(name: str) -> None:
    assert not is_secret_option(name)


def test_mask_options_keeps_names_and_drops_secret_values() -> None:
    options = {
        "api_key": KEY,
        "temperature": 0,
        "base_url": "http://127.0.0.1:8080",
        "headers": {"Authorization": "Bearer abc", "Accept": "json"},
        "token": None,
    }
    masked = mask_options(options)
    assert masked == {
        "api_key": "<SECRET>",
        "temperature": 0,
        "base_url": "http://127.0.0.1:8080",
        "headers": {"Authorization": "<SECRET>", "Accept": "json"},
        "token": None,
    }
    assert KEY not in json.dumps(masked)
    assert secret_values(options) == [KEY, "Bearer abc"]
