"""Secret detectors: known key formats, credentials in headers, URLs and assignments,
plus the regex detectors of Yelp's ``detect-secrets``.

The built-in formats (OpenAI, Anthropic, AWS, GitHub, Slack, Google, JWT, PEM private
keys, ``Authorization``/``Bearer`` values, passwords in URLs, ``api_key=...``-style
assignments) always run; :mod:`.detectsecrets` adds the regex plugins of
``detect-secrets``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

from .detectors import GENERIC, SPECIFIC, Detector

_PLACEHOLDER = re.compile(
    r"^(?:<[^<>]*>|\[[^\[\]]*\]|\*+|x{3,}|X{3,}|\.{3}|…|•+|-+|\$\{[A-Za-z_][\w.]*\}|\$\{\{[^{}]*\}\}|(?-i:\$[A-Z_][A-Z0-9_]*)|%(?:\(\w+\))?[sdr]"
    r"|\{\{?[^{}]*\}?\}|null|none|nil|true|false|undefined|redacted|hidden|changeme|change_me|secret"
    r"|str|string|bytes|int|any|optional\[str\]|secretstr|password|your[_-][\w-]*|example)$",
    re.IGNORECASE,
)
_CODE_REFERENCE = re.compile(
    r"^(?:os\.|self\.|cls\.|settings\.|config\.|args\.|env\.|process\.env|getenv)", re.I
)
_SECRET_WORDS = frozenset(
    [
        "api",
        "key",
        "apikey",
        "secret",
        "secrets",
        "pass",
        "password",
        "passwd",
        "pwd",
        "token",
        "credential",
        "credentials",
        "auth",
    ]
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret rather than being one (``<API_KEY>``, ``***``,
    ``${TOKEN}``, ``None``, ``os.environ[...]``, ``api_key=api_key``)."""
    v = value.strip().strip("\"'")
    return (
        len(v) < 3
        or v.startswith(("...", "…"))
        or _PLACEHOLDER.match(v) is not None
        or _CODE_REFERENCE.match(v) is not None
        or _names_a_secret(v)
    )


def _names_a_secret(value: str) -> bool:
    """A code name that mentions a secret (``api_key``, ``self.token``, ``getPassword``,
    ``API_KEY``), as in ``api_key=api_key``: a reference, not the value."""
    if not value.replace(".", "_").replace("-", "_").isidentifier():
        return False
    return any(part.lower() in _SECRET_WORDS for part in _NAME_PARTS.findall(value))


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_CODE_VALUE = re.compile(r"^_?[a-z][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$")
_SNAKE_WORDS = re.compile(r"^_*[a-z]+(?:_[a-z]+)*$")
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")


def _credential(value: str) -> bool:
    """A value after a credential name that is one: not a placeholder, a path, a code
    reference (``self.token``, ``m.group``) or prose (five words or more)."""
    return not (
        is_placeholder(value)
        or (value.startswith(("/", "~")) and value.count("/") > 1)
        or _CODE_VALUE.match(value) is not None
        or len(value.split()) > 4
    )


def _token_like(value: str) -> bool:
    """A bare word that is a credential rather than prose or code: one word, with a digit
    or a symbol or 12+ characters, not an UPPER_CASE constant."""
    if not _credential(value) or any(c.isspace() for c in value) or _CONSTANT.match(value):
        return False
    if "." in value and value.replace(".", "").isdigit():
        return False  # a version or an OID
    if _SNAKE_WORDS.match(value):
        return False  # a variable name
    return len(value) >= 12 or any(not c.isalpha() for c in value)


def _metavar_free(value: str) -> bool:
    return _credential(value) and _CONSTANT.match(value) is None


def _not_placeholder(value: str) -> bool:
    return not is_placeholder(value)


def _bearer_ok(value: str) -> bool:
    return _has_digit_and_letter(value) or len(value) >= 32


def _basic_ok(value: str) -> bool:
    """Base64 of ``user:password`` (what HTTP Basic credentials are)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


#: Names whose value in ``name = value`` / ``"name": "value"`` is a credential, whatever
#: it looks like, and names (``pass``, ``token``, ``secret``, ``auth``) whose value is one
#: only when it looks like a token (those words are also ordinary words and code names).
_STRONG = (
    r"(?:api[_-]?key|apikey|api[_-]?secret|app[_-]?secret|api[_-]?token|secret[_-]?(?:access[_-]?)?key"
    r"|client[_-]?secret|password|passwd|passphrase|pwd|access[_-]?token|refresh[_-]?token|auth[_-]?token"
    r"|id[_-]?token|session[_-]?token|bearer[_-]?token|access[_-]?key(?:[_-]?id)?|private[_-]?key"
    r"|signing[_-]?key|encryption[_-]?key|master[_-]?key|auth[_-]?key)"
)
_WEAK = r"(?:pass|token|secret|auth|credentials?)"
#: Start of a name's last word: not inside a word (``DB_PASSWORD``, ``x-api-key`` are fine).
_PREFIX = r"(?<![A-Za-z0-9])"
_NAME_END = r"(?:\\{0,3}[\"'])?"
_QUOTED = (
    r"(?:\"((?:[^\"\\\n]|\\.){3,}?)\"|'((?:[^'\\\n]|\\.){3,}?)'"
    r"|\\{1,3}\"((?:[^\"\\\n]|\\(?!\"))+?)\\{1,3}\")"
)
_BARE_CHAR = r"(?:[^\s\"'`\\,;&<>{}\[\]()]|&(?![\w.-]+=))"
_BARE = rf"({_BARE_CHAR}{{3,}})"
_TRIGGERS = ("key", "secret", "pass", "pwd", "token", "credential", "auth")


_ASSIGN = r"(?:=|:=|=>|->)"


def _forms(strong: bool) -> tuple[str, list[Callable[[str], bool]]]:
    """The ways a value follows a name, as one alternation, and the check of each group.

    ``NAME=value`` (config, env, URLs) and ``name: "value"`` take any value after a
    strong name; ``name = word`` (code) and ``name: word`` only token-like words."""
    any_value = _credential if strong else _token_like
    quoted_checks = [any_value] * 3
    forms = [
        (_ASSIGN + r"(?:" + _QUOTED + "|" + _BARE + ")", [*quoted_checks, any_value]),
        (r"[ \t]+" + _ASSIGN + r"[ \t]*" + _QUOTED, quoted_checks),
        (r"[ \t]*" + _ASSIGN + r"[ \t]+" + _QUOTED, quoted_checks),
        (r"[ \t]*" + _ASSIGN + r"[ \t]+" + _BARE, [_token_like]),
        (r"[ \t]+" + _ASSIGN + _BARE, [_token_like]),
        (r"[ \t]*:[ \t]*" + _QUOTED, quoted_checks),
        (r"[ \t]*:[ \t]*" + _BARE, [_token_like]),
    ]
    return "(?:" + "|".join(f for f, _ in forms) + ")", [c for _, cs in forms for c in cs]


def _assignments() -> list[Detector]:
    """``name = value``, ``name: "value"``, ``name: value``, ``--name value`` for the
    strong and the weak names, as two regexes (one scan each)."""
    strong_forms, strong_checks = _forms(True)
    weak_forms, weak_checks = _forms(False)
    assign = _PREFIX + "(?:" + _STRONG + _NAME_END + strong_forms + "|" + _WEAK + _NAME_END + weak_forms + ")"
    cli = r"(?<![\w-])--?(?:[A-Za-z0-9]+[_-])*(?:" + _STRONG + r"(?:[ \t]+|=)" + _BARE
    cli += "|" + _WEAK + r"(?:[ \t]+|=)" + _BARE + ")"
    return [
        Detector(
            "SECRET",
            re.compile(pattern, re.I),
            "secret",
            group=-1,
            group_checks=tuple(checks),
            priority=GENERIC,
            triggers=_TRIGGERS,
            fold=True,
        )
        for pattern, checks in (
            (assign, strong_checks + weak_checks),
            (cli, [_metavar_free, _token_like]),
        )
    ]


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def builtin_detectors() -> list[Detector]:
    """Assay's own secret detectors (independent of detect-secrets)."""
    s, g = SPECIFIC, GENERIC
    return [
        Detector(
            "ANTHROPIC_KEY",
            _c(r"(?<![\w-])sk-ant-(?:[a-z]+\d*-)?[A-Za-z0-9_-]{20,}"),
            "secret",
            priority=s + 2,
            triggers=("sk-ant-",),
        ),
        Detector(
            "OPENAI_KEY",
            _c(r"(?<![\w-])sk-(?!ant-)(?:(?:proj|svcacct|admin|None|test|live)-)?([A-Za-z0-9_-]{20,})"),
            "secret",
            check=_has_digit_and_letter,
            priority=s + 1,
            triggers=("sk-",),
        ),
        Detector(
            "AWS_ACCESS_KEY",
            _c(
                r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])"
            ),
            "secret",
            priority=s,
        ),
        Detector(
            "AWS_SECRET_KEY",
            _c(
                r"aws.{0,24}?(?:secret|key).{0,24}?[=:\"'\s]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
                re.I,
            ),
            "secret",
            group=1,
            priority=s,
            triggers=("aws",),
            fold=True,
        ),
        Detector(
            "GITHUB_TOKEN",
            _c(r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
            "secret",
            priority=s,
            triggers=("gh", "github_pat_"),
        ),
        Detector(
            "SLACK_TOKEN",
            _c(
                r"(?<![\w-])(?:xox[abposer]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}"
                r"|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]+)"
            ),
            "secret",
            priority=s,
            triggers=("xox", "xapp-", "hooks.slack.com"),
        ),
        Detector(
            "GOOGLE_API_KEY",
            _c(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"),
            "secret",
            priority=s,
            triggers=("AIza",),
        ),
        Detector(
            "JWT",
            _c(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
            "secret",
            priority=s,
            triggers=("eyJ",),
        ),
        Detector(
            "PRIVATE_KEY",
            _c(
                r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
                r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,-]*)",
                re.S,
            ),
            "secret",
            priority=s + 5,
            triggers=("PRIVATE KEY",),
        ),
        Detector(
            "AUTH_TOKEN",
            _c(
                r"\b(?:proxy-)?authorization(?:\\{0,3}[\"'])?\s*[:=]\s*(?:\\{0,3}[\"'])?"
                r"(?:(?:bearer|basic|token|digest|apikey|bot|key)\s+)?"
                r"(?!(?:bearer|basic|token|digest|apikey|bot|key)\b)([A-Za-z0-9._~+/:=-]{6,})",
                re.I,
            ),
            "secret",
            group=1,
            check=_not_placeholder,
            priority=s - 1,
            triggers=("authorization",),
            fold=True,
        ),
        Detector(
            "AUTH_TOKEN",
            _c(r"\b[Bb]earer\s+([A-Za-z0-9._~+/-]{12,}=*)"),
            "secret",
            group=1,
            check=_bearer_ok,
            priority=s - 1,
            triggers=("earer",),
        ),
        Detector(
            "AUTH_TOKEN",
            _c(r"\bBasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
            "secret",
            group=1,
            check=_basic_ok,
            priority=s - 1,
            triggers=("Basic",),
        ),
        Detector(
            "SECRET",
            _c(r"\b(?:set-)?cookie\s*:\s*([^\r\n\"\\]{6,})", re.I),
            "secret",
            group=1,
            check=_not_placeholder,
            priority=g,
            triggers=("cookie",),
            fold=True,
        ),
        Detector(
            "URL_PASSWORD",
            _c(r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/?#@\"'<>\\]+:([^\s@/?#\"'<>\\]+)@"),
            "secret",
            group=1,
            check=_not_placeholder,
            priority=s,
            triggers=("://",),
        ),
        *_assignments(),
    ]
