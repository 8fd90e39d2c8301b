"""Which names carry secrets: option names (``-m api_key=...``), JSON keys, headers.

``is_secret_option("api_key")`` is true, ``is_secret_option("max_tokens")`` false, so a
run spec can keep every option's name and drop the values of secret-bearing ones
(:func:`mask_options`), and pass those values to :func:`assay.redact.scrub`
(:func:`secret_values`). Pure functions over names: the run spec (core) and the
redaction library (:mod:`assay.redact`) both use them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: What a secret option's value is replaced with by :func:`mask_options`.
MASK = "<SECRET>"

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:api_?key|apikey|api_?secret|app_?secret|api_?token|access_?key(?:_?id)?|secret_?(?:access_?)?key"
    r"|private_?key|signing_?key|encryption_?key|master_?key|auth_?key|client_?secret|secret|secrets"
    r"|password|passwd|passphrase|pwd|pass|token|bearer|authorization|auth|credential|credentials"
    r"|cookie|dsn|connection_?string)$"
)


def normalize_name(name: str) -> str:
    """``"X-Api-Key"``, ``"apiKey"``, ``"api key"`` -> ``"x_api_key"``, ``"api_key"``."""
    return _SEPARATORS.sub("_", _CAMEL.sub("_", name).lower()).strip("_")


def is_secret_option(name: str) -> bool:
    """Whether an option, field or header called ``name`` holds a secret: names ending in
    ``api_key``, ``token``, ``password``, ``secret``, ``authorization``, ``credentials``,
    ``cookie`` and the like (``max_tokens``, ``token_count``, ``api_key_env`` do not)."""
    return _SECRET_NAME.search(normalize_name(name)) is not None


def mask_options(options: Mapping[str, Any], mask: str = MASK) -> dict[str, Any]:
    """``options`` with the value of every secret-bearing name (at any depth) replaced by
    ``mask``; empty and ``None`` values are kept, so a stored spec still says the
    option was given or not."""
    out: dict[str, Any] = {}
    for name, value in options.items():
        if isinstance(name, str) and is_secret_option(name) and value not in (None, ""):
            out[name] = mask
        elif isinstance(value, Mapping):
            out[name] = mask_options(value, mask)
        else:
            out[name] = value
    return out


def secret_values(options: Mapping[str, Any]) -> list[str]:
    """The values of secret-bearing options (at any depth), for :func:`scrub`."""
    found: list[str] = []
    for name, value in options.items():
        if isinstance(value, Mapping):
            found.extend(secret_values(value))
        elif isinstance(name, str) and is_secret_option(name) and isinstance(value, (str, int)):
            text = str(value)
            if text and text not in found:
                found.append(text)
    return found
