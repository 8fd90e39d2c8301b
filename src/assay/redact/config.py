"""Redaction settings: which kinds are on, how each is replaced, custom patterns.

A config is a mapping (or a YAML/JSON file, :func:`load_config`)::

    style: pseudonym            # pseudonym | label | mask | hash (default pseudonym)
    kinds:
      IP_ADDRESS: false         # off
      PHONE: {style: label}     # <PHONE> instead of <PHONE_1>
    patterns:                   # custom kinds
      - name: EMPLOYEE_ID
        regex: 'EMP-\\d{6}'
        validator: luhn         # optional: a built-in check or "module:function"
    allow: [support@example.com]
    secret_keys: [x_internal_auth]
    key_kinds: {customer_ref: CUSTOMER}

Errors name the file, line and field (:class:`RedactConfigError`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..core.sources import Located, Problem, ProblemError, parse_yaml, validation_problems
from ..errors import AssayError
from . import checks
from .kinds import known_kinds

Style = Literal["pseudonym", "label", "mask", "hash"]
_KIND_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,39}$")

#: JSON keys whose whole (string) value is personal data of a kind, by default.
DEFAULT_KEY_KINDS: dict[str, str] = {
    "email": "EMAIL",
    "email_address": "EMAIL",
    "phone": "PHONE",
    "phone_number": "PHONE",
    "telephone": "PHONE",
    "mobile": "PHONE",
    "ssn": "SSN",
    "social_security_number": "SSN",
    "cpf": "CPF",
    "dni": "DNI",
    "nie": "DNI",
    "nino": "NINO",
    "national_insurance_number": "NINO",
    "passport": "PASSPORT",
    "passport_number": "PASSPORT",
    "date_of_birth": "DATE_OF_BIRTH",
    "birth_date": "DATE_OF_BIRTH",
    "birthdate": "DATE_OF_BIRTH",
    "dob": "DATE_OF_BIRTH",
    "iban": "IBAN",
    "card_number": "CARD",
    "credit_card": "CARD",
    "credit_card_number": "CARD",
    "ip": "IP_ADDRESS",
    "ip_address": "IP_ADDRESS",
    "address": "ADDRESS",
    "street": "ADDRESS",
    "street_address": "ADDRESS",
    "shipping_address": "ADDRESS",
    "billing_address": "ADDRESS",
    "home_address": "ADDRESS",
    "first_name": "PERSON_NAME",
    "last_name": "PERSON_NAME",
    "full_name": "PERSON_NAME",
    "given_name": "PERSON_NAME",
    "family_name": "PERSON_NAME",
    "surname": "PERSON_NAME",
}


class RedactConfigError(AssayError):
    """A redaction config that cannot be used; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class KindConfig(BaseModel):
    """Settings of one kind."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    style: Style | None = None


class PatternConfig(BaseModel):
    """A custom kind found by a regular expression."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Kind name: upper-case letters, digits, underscores.")
    regex: str
    group: int | str = Field(0, description="Group holding the value (0: the whole match).")
    validator: str | None = Field(None, description="A built-in check or 'module:function'.")
    ignore_case: bool = False
    category: Literal["secret", "personal", "custom"] = "custom"
    style: Style | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _KIND_NAME.match(value):
            raise ValueError("must be upper-case letters, digits and underscores, starting with a letter")
        return value

    @field_validator("regex")
    @classmethod
    def _regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        if re.compile(value).match(""):
            raise ValueError("the regular expression matches the empty string")
        return value

    @field_validator("validator")
    @classmethod
    def _validator(cls, value: str | None) -> str | None:
        if value is not None:
            resolve_check(value)
        return value

    @model_validator(mode="after")
    def _group(self) -> PatternConfig:
        compiled = re.compile(self.regex)
        if isinstance(self.group, int) and not 0 <= self.group <= compiled.groups:
            raise ValueError(f"group {self.group} does not exist (the regex has {compiled.groups})")
        if isinstance(self.group, str) and self.group not in compiled.groupindex:
            raise ValueError(f"group {self.group!r} is not a named group of the regex")
        return self

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex, re.IGNORECASE if self.ignore_case else 0)


def resolve_check(name: str) -> Callable[[str], bool]:
    """A built-in check (``luhn``, ``iban``, ...) or a function named ``module:function``."""
    if name in checks.NAMED_CHECKS:
        return checks.NAMED_CHECKS[name]
    module, sep, attr = name.partition(":")
    if not sep:
        raise ValueError(
            f"unknown validator {name!r} "
            f"(built-in: {', '.join(sorted(checks.NAMED_CHECKS))}, or module:function)"
        )
    try:
        func = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"validator {name!r} cannot be imported: {exc}") from None
    if not callable(func):
        raise ValueError(f"validator {name!r} is not callable")
    return func


class RedactConfig(BaseModel):
    """How a :class:`~assay.redact.Redactor` finds and replaces sensitive values."""

    model_config = ConfigDict(extra="forbid")

    style: Style = "pseudonym"
    placeholder: str = Field("<{kind}_{n}>", description="Pseudonym format: {kind} and {n}.")
    label: str = Field("<{kind}>", description="Label format: {kind}.")
    mask: str = "[REDACTED]"
    hash_format: str = Field("<{kind}_{hash}>", description="Hash format: {kind} and {hash}.")
    salt: str | None = Field(None, description="Key of the 'hash' style (required by it).")
    secrets: bool = Field(True, description="Detect secrets (keys, tokens, passwords).")
    personal: bool = Field(True, description="Detect personal data.")
    detect_secrets: bool = Field(True, description="Add detect-secrets' regex plugins.")
    kinds: dict[str, bool | KindConfig] = Field(default_factory=dict)
    patterns: list[PatternConfig] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list, description="Values never redacted.")
    redact_keys: bool = Field(False, description="Also redact the keys of mappings.")
    secret_keys: list[str] = Field(default_factory=list, description="More names whose values are secret.")
    key_kinds: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_KEY_KINDS))

    @field_validator("placeholder")
    @classmethod
    def _placeholder(cls, value: str) -> str:
        _format_check(value, n=1)
        if "{n}" not in value:
            raise ValueError("must contain {n}, the pseudonym's number")
        return value

    @field_validator("label")
    @classmethod
    def _label(cls, value: str) -> str:
        _format_check(value)
        return value

    @field_validator("hash_format")
    @classmethod
    def _hash_format(cls, value: str) -> str:
        _format_check(value, hash="0")
        if "{hash}" not in value:
            raise ValueError("must contain {hash}")
        return value

    @field_validator("key_kinds")
    @classmethod
    def _key_kinds(cls, value: dict[str, str]) -> dict[str, str]:
        for key, kind in value.items():
            if not _KIND_NAME.match(kind):
                raise ValueError(f"{key}: kind {kind!r} must be upper-case letters, digits, underscores")
        return value

    @model_validator(mode="after")
    def _hash_needs_salt(self) -> RedactConfig:
        styles = [self.style] + [k.style for k in self.kinds.values() if isinstance(k, KindConfig)]
        styles += [p.style for p in self.patterns]
        if "hash" in styles and not self.salt:
            raise ValueError("the 'hash' style needs a salt (a secret string kept out of shared files)")
        names = [p.name for p in self.patterns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"custom patterns named twice: {', '.join(dupes)}")
        return self

    def unknown_kinds(self) -> list[str]:
        """Names under ``kinds`` that no detector, pattern or key reports."""
        known = set(known_kinds()) | {p.name for p in self.patterns} | set(self.key_kinds.values())
        return sorted(k for k in self.kinds if k not in known)

    def kind(self, name: str) -> KindConfig:
        setting = self.kinds.get(name)
        if isinstance(setting, bool):
            return KindConfig(enabled=setting)
        return setting or KindConfig()

    def style_of(self, kind: str) -> Style:
        custom = next((p.style for p in self.patterns if p.name == kind and p.style), None)
        return self.kind(kind).style or custom or self.style


def _format_check(template: str, **extra: Any) -> None:
    try:
        template.format(kind="EMAIL", **extra)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"invalid format {template!r}: {exc}") from None


def parse_config(data: Any, located: Located | None = None) -> RedactConfig:
    """A config from parsed data; problems located when ``located`` is given."""
    if data is None:
        data = {}
    where = located or Located("<config>")
    if isinstance(data, RedactConfig):
        config = data
    elif not isinstance(data, Mapping):
        raise RedactConfigError(
            [Problem(where.file, where.line(()), "", "a redaction config must be a mapping")]
        )
    else:
        try:
            config = RedactConfig.model_validate(data)
        except ValidationError as exc:
            raise RedactConfigError(validation_problems(exc, where)) from None
    unknown = config.unknown_kinds()
    if unknown:
        known = ", ".join(sorted(set(known_kinds()) | {p.name for p in config.patterns}))
        raise RedactConfigError(
            [
                where.problem(
                    ("kinds", name), f"unknown kind (known: {known}; custom kinds go under patterns)"
                )
                for name in unknown
            ]
        )
    return config


def load_config(path: str | Path) -> RedactConfig:
    """Read a YAML or JSON redaction config file (a top-level ``redact:`` key is allowed)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise RedactConfigError([Problem(str(path), None, "", f"cannot read the config: {reason}")]) from None
    try:
        data, located = parse_yaml(text, str(path))
    except ProblemError as exc:
        raise RedactConfigError(exc.problems) from None
    if isinstance(data, dict) and set(data) == {"redact"}:
        data, located = data["redact"], located.sub("redact")
    return parse_config(data, located)
