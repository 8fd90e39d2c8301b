"""The regex plugins of Yelp's ``detect-secrets`` as detectors.

``detect-secrets`` (a dependency of assay) adds Stripe, Twilio, SendGrid, GitLab, npm,
PyPI, Azure, Discord, Telegram, Mailchimp, Square, IBM, Softlayer and Cloudant formats
to the built-in ones (:mod:`.credentials`). Its entropy and keyword plugins are not used
(too many false positives on hashes and ids; the assignment rules cover keywords), nor
its ``verify`` step, which would contact the provider. Without the package, the
built-in detectors still run.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .credentials import is_placeholder
from .detectors import SPECIFIC, Detector


def _not_placeholder(value: str) -> bool:
    return not is_placeholder(value)


#: detect-secrets' secret types that map onto a built-in kind.
_DS_KINDS = {
    "AWS Access Key": "AWS_ACCESS_KEY",
    "Basic Auth Credentials": "URL_PASSWORD",
    "GitHub Token": "GITHUB_TOKEN",
    "JSON Web Token": "JWT",
    "OpenAI Token": "OPENAI_KEY",
    "Private Key": "PRIVATE_KEY",
    "Slack Token": "SLACK_TOKEN",
}
#: What each detect-secrets plugin's patterns need, so that a plugin runs only on texts
#: that have it: substrings (compared lower-cased when ``fold``) and whether a digit is
#: required. A plugin missing here runs on every text.
_DS_NEEDS: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "AWS Access Key": (("a3t", "abia", "acca", "akia", "asia", "aws"), True, False),
    "Azure Storage Account access key": (("AccountKey=",), False, False),
    "Basic Auth Credentials": (("://",), False, False),
    "Cloudant Credentials": (("key", "pw", "pass", "token", "cloudant"), True, False),
    "Discord Bot Token": (("M", "N", "O"), False, False),
    "GitHub Token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), False, False),
    "GitLab Token": (
        ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941", "glcbt-", "glimt-"),
        False,
        False,
    ),
    "IBM Cloud IAM Key": (("key", "pwd", "pass", "token"), True, False),
    "IBM COS HMAC Credentials": (("secret",), True, False),
    "JSON Web Token": (("eyJ",), False, False),
    "Mailchimp Access Key": (("-us",), False, True),
    "NPM tokens": (("_authToken",), False, False),
    "OpenAI Token": (("T3BlbkFJ",), False, False),
    "Private Key": (("PRIVATE KEY", "PuTTY"), False, False),
    "PyPI Token": (("pypi-",), False, False),
    "SendGrid API Key": (("SG.",), False, False),
    "Slack Token": (("xox", "hooks.slack.com"), True, False),
    "SoftLayer Credentials": (("key", "pwd", "pass", "token", "softlayer"), True, False),
    "Square OAuth Secret": (("sq0csp-",), False, False),
    "Stripe Access Key": (("k_live_",), False, False),
    "Telegram Bot Token": ((":",), False, True),
    "Twilio API Key": (("AC", "SK"), False, False),
}
#: detect-secrets plugins not used: assay's own detectors do their job with fewer false
#: positives (public IPs are personal data here; the Artifactory rule matches words).
_DS_SKIP = {"Public IP (ipv4)", "Artifactory Credentials"}


def _kind_name(secret_type: str) -> str:
    return _DS_KINDS.get(secret_type) or re.sub(r"[^A-Z0-9]+", "_", secret_type.upper()).strip("_")


@lru_cache(maxsize=1)
def detect_secrets_detectors() -> tuple[Detector, ...]:
    """The regex plugins of ``detect-secrets`` as detectors (empty if it is missing)."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # pragma: no cover - a declared dependency; built-ins still run
        return ()
    out: list[Detector] = []
    cls: type
    for secret_type, cls in sorted(get_mapping_from_secret_type_to_class().items()):
        if secret_type in _DS_SKIP or not issubclass(cls, RegexBasedDetector):
            continue
        triggers, fold, needs_digit = _DS_NEEDS.get(secret_type, ((), False, False))
        for pattern in cls.denylist:  # type: ignore[attr-defined]
            out.append(
                Detector(
                    _kind_name(secret_type),
                    pattern,
                    "secret",
                    group=-1,
                    check=_not_placeholder,
                    priority=SPECIFIC - 2,
                    triggers=triggers,
                    fold=fold,
                    needs_digit=needs_digit,
                    trim=True,
                    source="detect-secrets",
                )
            )
    return tuple(out)


def detect_secrets_version() -> str | None:
    """The installed detect-secrets version, or None when it is not installed."""
    try:
        from detect_secrets.__version__ import VERSION
    except ImportError:  # pragma: no cover
        return None
    return str(VERSION)
