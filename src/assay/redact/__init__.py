"""Redaction of secrets and personal data before anything leaves assay or flows back in.

A low layer (it imports only ``assay.core`` and ``assay.errors``)::

    from assay.redact import Redactor, scrub, is_secret_option, mask_options

    r = Redactor()                                   # or Redactor(config), Redactor(secrets=[key])
    out = r.redact({"messages": [...], "spans": [...]})
    out.value        # the redacted copy: <EMAIL_1>, <PHONE_1>, <OPENAI_KEY_1> ...
    out.counts       # {"EMAIL": 2, "PHONE": 1}: occurrences per kind, never the values
    out.redacted     # the flag a span or record carries

    scrub("401: Incorrect API key provided: sk-...wxyz", [key])   # -> "401: ... <SECRET>"
    mask_options({"api_key": key, "temperature": 0})              # names kept, values not

See ``docs/redaction.md`` for the kinds, the config format, guarantees and limits.
"""

from __future__ import annotations

from ..core.secrets import MASK, is_secret_option, mask_options, normalize_name, secret_values
from .config import DEFAULT_KEY_KINDS, KindConfig, PatternConfig, RedactConfig, RedactConfigError, load_config
from .credentials import is_placeholder
from .detectors import Detector, Finding
from .detectsecrets import detect_secrets_version
from .kinds import BUILTIN_KINDS, known_kinds
from .redactor import Redaction, RedactionSession, Redactor
from .scrub import SCRUBBED, scrub, secret_spans
from .trial import TrialRedaction, redact_trial

__all__ = [
    "BUILTIN_KINDS",
    "DEFAULT_KEY_KINDS",
    "MASK",
    "SCRUBBED",
    "Detector",
    "Finding",
    "KindConfig",
    "PatternConfig",
    "RedactConfig",
    "RedactConfigError",
    "Redaction",
    "RedactionSession",
    "Redactor",
    "TrialRedaction",
    "detect_secrets_version",
    "is_placeholder",
    "is_secret_option",
    "known_kinds",
    "load_config",
    "mask_options",
    "normalize_name",
    "redact_trial",
    "scrub",
    "secret_spans",
    "secret_values",
]
