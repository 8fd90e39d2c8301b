"""The kinds of sensitive values assay finds, with their category and a description."""

from __future__ import annotations

from functools import lru_cache

from .detectors import Category
from .detectsecrets import detect_secrets_detectors

#: Built-in kinds: name -> (category, description).
BUILTIN_KINDS: dict[str, tuple[Category, str]] = {
    "OPENAI_KEY": ("secret", "OpenAI API key (sk-, sk-proj-, sk-svcacct-, sk-admin-)"),
    "ANTHROPIC_KEY": ("secret", "Anthropic API key (sk-ant-...)"),
    "AWS_ACCESS_KEY": ("secret", "AWS access key id (AKIA..., ASIA..., ...)"),
    "AWS_SECRET_KEY": ("secret", "AWS secret access key (40 characters near 'aws ... key')"),
    "GITHUB_TOKEN": ("secret", "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)"),
    "SLACK_TOKEN": ("secret", "Slack token (xoxb-, xoxp-, xapp-, ...) or webhook URL"),
    "GOOGLE_API_KEY": ("secret", "Google API key (AIza...)"),
    "JWT": ("secret", "JSON Web Token (eyJ... . eyJ... . signature)"),
    "PRIVATE_KEY": ("secret", "PEM/OpenSSH/PGP private key block"),
    "AUTH_TOKEN": ("secret", "Authorization header value, Bearer token"),
    "URL_PASSWORD": ("secret", "Password in a URL (scheme://user:password@host)"),
    "SECRET": (
        "secret",
        "Value assigned to a secret-bearing name (api_key=, password:, token=, cookie:), "
        "the value of a secret-bearing JSON key, or a known secret given to the redactor",
    ),
    "EMAIL": ("personal", "Email address"),
    "PHONE": (
        "personal",
        "Phone number: +CC international, North American, trunk-0 national, or after 'phone:'",
    ),
    "CARD": ("personal", "Payment card number (issuer prefix and Luhn check)"),
    "IBAN": ("personal", "International bank account number (country length and mod-97 check)"),
    "SSN": ("personal", "US Social Security number (ddd-dd-dddd, or 9 digits after 'SSN')"),
    "NINO": ("personal", "UK National Insurance number"),
    "DNI": ("personal", "Spanish DNI/NIE (control letter checked)"),
    "CPF": ("personal", "Brazilian CPF (both check digits checked)"),
    "ADDRESS": (
        "personal",
        "Street address (US/UK, German, French, Spanish/Italian/Portuguese forms, PO box)",
    ),
    "IP_ADDRESS": ("personal", "IPv4 or IPv6 address (not loopback or unspecified)"),
    "PERSON_NAME": ("personal", "A name under a name key (first_name, last_name, ...), and its repeats"),
    "DATE_OF_BIRTH": ("personal", "A date under a birth-date key (dob, date_of_birth, ...), and its repeats"),
    "PASSPORT": ("personal", "A passport number under a passport key, and its repeats"),
}


@lru_cache(maxsize=1)
def detect_secrets_kinds() -> dict[str, tuple[Category, str]]:
    """Kinds added by detect-secrets' plugins (beyond the built-in ones)."""
    out: dict[str, tuple[Category, str]] = {}
    for det in detect_secrets_detectors():
        if det.kind not in BUILTIN_KINDS:
            out[det.kind] = ("secret", f"{det.kind.replace('_', ' ').title()} (detect-secrets)")
    return out


def known_kinds() -> dict[str, tuple[Category, str]]:
    """Every kind a default redactor can report."""
    return {**BUILTIN_KINDS, **detect_secrets_kinds()}
