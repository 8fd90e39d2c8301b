"""A planted corpus for measuring redaction: secrets and personal data of many kinds and
formats inside realistic transcripts, tool outputs (JSON, also JSON-encoded inside a
tool message) and error messages. Deterministic: everything comes from one
``random.Random(seed)``.

Each record lists what was planted in it (kind, value, fragments that must not survive)
and a consistency triple: three strings holding one value each (A, B, A, with A != B of
the same kind) whose pseudonyms must come out as X, Y, X.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ALNUM = string.ascii_letters + string.digits
FIRST = [
    "Ana",
    "Bilal",
    "Chloe",
    "Dmitri",
    "Elena",
    "Farah",
    "George",
    "Hana",
    "Ivan",
    "Julia",
    "Kofi",
    "Lena",
]
LAST = ["Ortiz", "Nakamura", "Schulz", "Okoye", "Dubois", "Rossi", "Kowalski", "Haddad", "Lindqvist", "Reyes"]
DOMAINS = [
    "gmail.com",
    "outlook.com",
    "example.org",
    "mail.co.uk",
    "uni-bonn.de",
    "acme.io",
    "proton.me",
    "eu.corp.example.com",
]
STREET_NAMES = [
    "Maple",
    "Oak",
    "Cedar",
    "Washington",
    "Lincoln",
    "Main",
    "Highland",
    "Sunset",
    "Church",
    "Mill",
    "Lake",
    "Pine",
    "Martin Luther King Jr",
]
SUFFIXES = [
    "Street",
    "St",
    "Avenue",
    "Ave",
    "Road",
    "Rd",
    "Boulevard",
    "Blvd",
    "Lane",
    "Drive",
    "Court",
    "Way",
    "Place",
    "Terrace",
]
US_CITIES = [("Springfield", "IL"), ("Portland", "OR"), ("Austin", "TX"), ("San Jose", "CA"), ("Boise", "ID")]


@dataclass
class Planted:
    """One planted value: ``kind`` (what it is), ``value`` (as written), ``phrase`` (the
    value in context), ``leaks`` (fragments that must not survive redaction)."""

    kind: str
    value: str
    phrase: str
    leaks: tuple[str, ...] = ()


@dataclass
class Record:
    context: str
    data: Any
    planted: list[Planted] = field(default_factory=list)
    #: paths (into ``data``) of the three consistency strings, and their kind
    triple: tuple[tuple[Any, ...], ...] = ()
    triple_kind: str = ""


def _rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _luhn_complete(partial: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return partial + str((10 - total % 10) % 10)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# -- personal data --------------------------------------------------------------------


def email(rng: random.Random) -> Planted:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice(
        [
            f"{first}.{last}".lower(),
            f"{first[0]}{last}{rng.randint(1, 99)}".lower(),
            f"{first.lower()}+shop{rng.randint(1, 9)}",
            f"{first}.{last}",
            f"{last.lower()}_{first.lower()}",
        ]
    )
    v = f"{local}@{rng.choice(DOMAINS)}"
    phrase = rng.choice(
        [
            "my email is {v}",
            "Email: {v}",
            "write to <{v}>",
            "contact {v}.",
            "mailto:{v}",
            "{{'email': '{v}'}}",
            "?email={v}&x=1",
        ]
    )
    return Planted("EMAIL", v, phrase.format(v=v))


def phone(rng: random.Random) -> Planted:
    a, e, line = (
        f"{rng.randint(2, 9)}{_digits(rng, 2)}",
        f"{rng.randint(2, 9)}{_digits(rng, 2)}",
        _digits(rng, 4),
    )
    uk_area, uk_num = rng.choice([("20", "7946 0{}"), ("161", "496 0{}")]), _digits(rng, 3)
    mobile = f"7{_digits(rng, 3)} {_digits(rng, 6)}"
    fr = " ".join(_digits(rng, 2) for _ in range(4))
    de = _digits(rng, 8)
    v = rng.choice(
        [
            f"({a}) {e}-{line}",
            f"{a}-{e}-{line}",
            f"{a}.{e}.{line}",
            f"+1 {a} {e} {line}",
            f"+1-{a}-{e}-{line}",
            f"1-{a}-{e}-{line}",
            f"+1{a}{e}{line}",
            f"+44 {uk_area[0]} {uk_area[1].format(uk_num)}",
            f"+44 (0){uk_area[0]} {uk_area[1].format(uk_num)}",
            f"0{uk_area[0]} {uk_area[1].format(uk_num)}",
            f"0{mobile}",
            f"+44 {mobile}",
            f"+33 {rng.randint(1, 9)} {fr}",
            f"0{rng.randint(1, 9)} {fr}",
            f"0{rng.randint(6, 7)}.{fr.replace(' ', '.')}",
            f"+49 30 {de}",
            f"030 {de}",
            f"+49 151 {de}",
            f"+91 9{_digits(rng, 4)} {_digits(rng, 5)}",
        ]
    )
    phrase = rng.choice(
        ["call me on {v}", "my number is {v}", "Phone: {v}", "tel {v}", "you can reach me at {v} after 5"]
    )
    bare = rng.random() < 0.15
    if bare:  # a bare run of digits is a phone only after a word that says so
        v = f"{a}{e}{line}"
        phrase = rng.choice(["phone: {v}", "Mobile number {v}", '"phone_number": "{v}"'])
    return Planted(
        "PHONE", v, phrase.format(v=v), (v.replace(" ", ""),) if len(v.replace(" ", "")) > 9 else ()
    )


def card(rng: random.Random) -> Planted:
    brand = rng.choice(["visa", "mc", "amex", "discover", "visa"])
    if brand == "visa":
        number = _luhn_complete("4" + _digits(rng, 14))
    elif brand == "mc":
        number = _luhn_complete(f"5{rng.randint(1, 5)}" + _digits(rng, 13))
    elif brand == "amex":
        number = _luhn_complete(rng.choice(["34", "37"]) + _digits(rng, 12))
    else:
        number = _luhn_complete("6011" + _digits(rng, 11))
    if len(number) == 15:
        sep = rng.choice([" ", "-", ""])
        v = sep.join([number[:4], number[4:10], number[10:]])
    else:
        sep = rng.choice([" ", "-", ""])
        v = sep.join(number[i : i + 4] for i in range(0, 16, 4))
    phrase = rng.choice(["my card is {v}", "Card number: {v}, exp 09/27", "charge {v} please", "PAN={v}"])
    return Planted("CARD", v, phrase.format(v=v), (number,))


def _iban_check(country: str, bban: str) -> str:
    rearranged = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in rearranged))
    return f"{98 - number % 97:02d}"


def iban(rng: random.Random) -> Planted:
    country, bban = rng.choice(
        [
            ("DE", _digits(rng, 18)),
            ("GB", _rand(rng, 4, string.ascii_uppercase) + _digits(rng, 14)),
            (
                "FR",
                _digits(rng, 10) + _rand(rng, 11, string.ascii_uppercase + string.digits) + _digits(rng, 2),
            ),
            ("ES", _digits(rng, 20)),
            ("NL", _rand(rng, 4, string.ascii_uppercase) + _digits(rng, 10)),
            ("IT", rng.choice(string.ascii_uppercase) + _digits(rng, 10) + _digits(rng, 12)),
            ("BE", _digits(rng, 12)),
            ("CH", _digits(rng, 5) + _digits(rng, 12)),
        ]
    )
    compact = country + _iban_check(country, bban) + bban
    v = compact if rng.random() < 0.4 else " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    phrase = rng.choice(
        ["IBAN {v}", "please refund to {v}", "account: {v}.", "bank details {v} (BIC DEUTDEFF)"]
    )
    return Planted("IBAN", v, phrase.format(v=v), (compact,))


def ssn(rng: random.Random) -> Planted:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    core = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    form = rng.random()
    if form < 0.5:
        v = "-".join(core)
        phrase = rng.choice(["SSN {v}", "social security number {v}", "my ssn is {v}", "id {v} on file"])
    elif form < 0.75:
        v = " ".join(core)
        phrase = rng.choice(["SSN: {v}", "it's {v}"])
    else:
        v = "".join(core)
        phrase = rng.choice(["SSN: {v}", "Social Security No. {v}", '"ssn": "{v}"'])
    return Planted("SSN", v, phrase.format(v=v), ("".join(core),))


def nino(rng: random.Random) -> Planted:
    first = rng.choice("ABCEGHJKLMNPRSTWXYZ")
    second = rng.choice("ABCEGHJKLMNPRSTWXYZ")
    while first + second in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
        second = rng.choice("ABCEGHJKLMNPRSTWXYZ")
    d = _digits(rng, 6)
    suffix = rng.choice("ABCD")
    compact = f"{first}{second}{d}{suffix}"
    v = compact if rng.random() < 0.5 else f"{first}{second} {d[:2]} {d[2:4]} {d[4:]} {suffix}"
    phrase = rng.choice(["NI number {v}", "National Insurance: {v}", "my NINO is {v}"])
    return Planted("NINO", v, phrase.format(v=v), (compact,))


def dni(rng: random.Random) -> Planted:
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.3:
        lead = rng.choice("XYZ")
        body = _digits(rng, 7)
        n = int(str("XYZ".index(lead)) + body)
        v = f"{lead}{body}{letters[n % 23]}"
    else:
        body = _digits(rng, 8)
        v = body + rng.choice(["", "-"]) + letters[int(body) % 23]
    phrase = rng.choice(["DNI {v}", "NIE: {v}", "documento {v}"])
    return Planted("DNI", v, phrase.format(v=v), (v.replace("-", ""),))


def cpf(rng: random.Random) -> Planted:
    while True:
        nums = [rng.randint(0, 9) for _ in range(9)]
        if len(set(nums)) > 1:
            break
    for n in (9, 10):
        total = sum(nums[i] * (n + 1 - i) for i in range(n))
        nums.append((total * 10) % 11 % 10)
    ds = "".join(map(str, nums))
    v = f"{ds[:3]}.{ds[3:6]}.{ds[6:9]}-{ds[9:]}" if rng.random() < 0.7 else ds
    phrase = "CPF {v}" if v == ds else rng.choice(["CPF {v}", "meu CPF é {v}", "documento {v}"])
    return Planted("CPF", v, phrase.format(v=v), (ds,))


def address(rng: random.Random) -> Planted:
    form = rng.random()
    if form < 0.55:
        direction = rng.choice(["", "N ", "West "])
        street = f"{rng.randint(1, 9899)} {direction}{rng.choice(STREET_NAMES)} {rng.choice(SUFFIXES)}"
        street = street.replace("  ", " ")
        v = street
        if rng.random() < 0.3:
            v += rng.choice([", Apt 4B", " Suite 210", ", Unit 7"])
        if rng.random() < 0.6:
            city, st = rng.choice(US_CITIES)
            v += f", {city}, {st} {rng.randint(10000, 99999)}"
        leak = street
    elif form < 0.65:
        v = f"{rng.randint(1, 250)}{rng.choice(['', 'B'])} Baker Street, London NW1 6XE"
        leak = v.split(",")[0]
    elif form < 0.8:
        name = rng.choice(["Haupt", "Linden", "Bahnhof", "Goethe", "Schiller"])
        street = rng.choice([f"{name}straße {rng.randint(1, 120)}", f"Berliner Straße {rng.randint(1, 120)}"])
        v = street + (f", {rng.randint(10000, 99999)} Berlin" if rng.random() < 0.5 else "")
        leak = street
    elif form < 0.9:
        street = f"{rng.randint(1, 99)} rue de la {rng.choice(['Paix', 'République', 'Gare'])}"
        v = street + (f", 750{rng.randint(10, 20)} Paris" if rng.random() < 0.5 else "")
        leak = street
    elif form < 0.95:
        v = rng.choice([f"Calle de Alcalá {rng.randint(1, 300)}", f"Via Roma {rng.randint(1, 99)}"])
        leak = v
    else:
        v = f"PO Box {rng.randint(100, 99999)}"
        leak = v
    phrase = rng.choice(["ship it to {v}", "I live at {v}.", "Address: {v}", "new address is {v}, thanks"])
    return Planted("ADDRESS", v, phrase.format(v=v), (leak,))


def ip_address(rng: random.Random) -> Planted:
    form = rng.random()
    if form < 0.6:
        first = rng.choice([8, 23, 45, 66, 81, 93, 104, 151, 185, 203, 212])
        v = f"{first}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    elif form < 0.75:
        v = rng.choice(
            [
                f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            ]
        )
    else:
        groups = [f"{rng.randint(0, 0xFFFF):x}" for _ in range(8)]
        v = ":".join(groups) if rng.random() < 0.5 else f"2001:db8:{groups[2]}::{groups[6]}:{groups[7]}"
    phrase = rng.choice(
        ["client ip {v}", "request from {v} blocked", "X-Forwarded-For: {v}", "login from {v}:443"]
    )
    return Planted("IP_ADDRESS", v, phrase.format(v=v))


# -- secrets ----------------------------------------------------------------------------


def _secret(kind: str, v: str, phrase: str, core: str) -> Planted:
    mid = core[len(core) // 2 - 6 : len(core) // 2 + 6]
    return Planted(kind, v, phrase.format(v=v), (mid,))


def openai_key(rng: random.Random) -> Planted:
    prefix = rng.choice(["sk-", "sk-proj-", "sk-svcacct-", "sk-test-"])
    body = _rand(rng, 48) if prefix == "sk-" else _rand(rng, rng.randint(60, 120), ALNUM + "-_")
    v = prefix + body
    phrase = rng.choice(
        [
            "OPENAI_API_KEY={v}",
            "here is my key {v}",
            "Incorrect API key provided: {v}. You can find your API key at https://platform.openai.com/account/api-keys.",
            "client = OpenAI(api_key='{v}')",
        ]
    )
    return _secret("OPENAI_KEY", v, phrase, body)


def anthropic_key(rng: random.Random) -> Planted:
    body = _rand(rng, 93, ALNUM + "-_") + "AA"
    v = "sk-ant-api03-" + body
    phrase = rng.choice(["ANTHROPIC_API_KEY={v}", "x-api-key: {v}", "key {v} was rejected"])
    return _secret("ANTHROPIC_KEY", v, phrase, body)


def aws_access_key(rng: random.Random) -> Planted:
    v = rng.choice(["AKIA", "ASIA"]) + _rand(rng, 16, string.ascii_uppercase + "234567")
    phrase = rng.choice(["aws_access_key_id = {v}", "AccessKeyId: {v}", "the key {v} is not authorized"])
    return _secret("AWS_ACCESS_KEY", v, phrase, v[4:])


def aws_secret_key(rng: random.Random) -> Planted:
    v = _rand(rng, 40, ALNUM + "/+")
    phrase = rng.choice(
        ["aws_secret_access_key = {v}", "AWS_SECRET_ACCESS_KEY={v}", '"aws_secret_access_key": "{v}"']
    )
    return _secret("AWS_SECRET_KEY", v, phrase, v)


def github_token(rng: random.Random) -> Planted:
    if rng.random() < 0.7:
        v = rng.choice(["ghp_", "gho_", "ghs_"]) + _rand(rng, 36)
    else:
        v = "github_pat_" + _rand(rng, 22) + "_" + _rand(rng, 59)
    phrase = rng.choice(
        ["GITHUB_TOKEN={v}", "git clone https://{v}@github.com/acme/app.git", "token {v} expired"]
    )
    return _secret("GITHUB_TOKEN", v, phrase, v.split("_", 1)[1])


def slack_token(rng: random.Random) -> Planted:
    if rng.random() < 0.6:
        tail = _rand(rng, 24, string.ascii_lowercase + string.digits)
        v = f"xox{rng.choice('bpa')}-{_digits(rng, 12)}-{_digits(rng, 13)}-{tail}"
        core = v.rsplit("-", 1)[1]
    else:
        core = _rand(rng, 24)
        team, bot = (_rand(rng, 8, string.ascii_uppercase + string.digits) for _ in range(2))
        v = f"https://hooks.slack.com/services/T{team}/B{bot}/{core}"
    phrase = rng.choice(["SLACK_BOT_TOKEN={v}", "posting to {v}", "slack: {v}"])
    return _secret("SLACK_TOKEN", v, phrase, core)


def google_key(rng: random.Random) -> Planted:
    v = "AIza" + _rand(rng, 35, ALNUM + "-_")
    phrase = rng.choice(
        ["https://maps.googleapis.com/maps/api/geocode/json?key={v}", "GOOGLE_API_KEY={v}", "key={v}"]
    )
    return _secret("GOOGLE_API_KEY", v, phrase, v[4:])


def jwt(rng: random.Random) -> Planted:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(
        json.dumps({"sub": _digits(rng, 8), "name": rng.choice(FIRST), "iat": 1718000000}).encode()
    )
    sig = _b64url(rng.randbytes(32))
    v = f"{header}.{payload}.{sig}"
    phrase = rng.choice(["Authorization: Bearer {v}", "token={v}", "session cookie jwt {v}"])
    return _secret("JWT", v, phrase, sig)


def private_key(rng: random.Random) -> Planted:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    lines = [_rand(rng, 64, ALNUM + "+/") for _ in range(rng.randint(3, 8))]
    v = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return Planted("PRIVATE_KEY", v, f"key file contents:\n{v}\n", (lines[1],))


def auth_token(rng: random.Random) -> Planted:
    if rng.random() < 0.6:
        core = _rand(rng, rng.randint(24, 64), ALNUM + "-._")
        v = f"Bearer {core}"
    else:
        user, pw = rng.choice(FIRST).lower(), _rand(rng, 14)
        core = base64.b64encode(f"{user}:{pw}".encode()).decode()
        v = f"Basic {core}"
    phrase = rng.choice(["Authorization: {v}", "-H 'Authorization: {v}'", '"authorization": "{v}"'])
    return _secret("AUTH_TOKEN", v, phrase, core)


def url_password(rng: random.Random) -> Planted:
    pw = _rand(rng, rng.randint(10, 20), ALNUM + "!$%^*_")
    user = rng.choice(["admin", "app", "svc_orders", "postgres"])
    host = rng.choice(["db.internal", "10.0.3.7", "redis.prod.local", "mq.acme.io"])
    scheme = rng.choice(["postgresql", "mysql", "redis", "amqp", "https"])
    v = f"{scheme}://{user}:{pw}@{host}:5432/app"
    phrase = rng.choice(["could not connect to {v}", "DATABASE_URL={v}", "dsn: {v}"])
    return Planted("URL_PASSWORD", v, phrase.format(v=v), (pw,))


def generic_secret(rng: random.Random) -> Planted:
    value = _rand(rng, rng.randint(12, 32), ALNUM + "!#%&*+-_")
    form = rng.choice(
        [
            "api_key={v}",
            "password: {v}",
            '"client_secret": "{v}"',
            "DB_PASSWORD='{v}'",
            'token = "{v}"',
            "--api-key {v}",
            "SECRET_KEY={v}",
            "'passwd': '{v}'",
        ]
    )
    return Planted("SECRET", value, form.format(v=value), (value,))


def stripe_key(rng: random.Random) -> Planted:
    v = rng.choice(["sk_live_", "rk_live_"]) + _rand(rng, 24)
    phrase = rng.choice(["STRIPE_KEY={v}", "stripe key {v}", "Invalid API Key provided: {v}"])
    return _secret("STRIPE_ACCESS_KEY", v, phrase, v[8:])


def sendgrid_key(rng: random.Random) -> Planted:
    v = f"SG.{_rand(rng, 22, ALNUM + '-_')}.{_rand(rng, 43, ALNUM + '-_')}"
    return _secret("SENDGRID_API_KEY", v, rng.choice(["SENDGRID_API_KEY={v}", "mail key {v}"]), v[3:25])


GENERATORS: dict[str, Callable[[random.Random], Planted]] = {
    "EMAIL": email,
    "PHONE": phone,
    "CARD": card,
    "IBAN": iban,
    "SSN": ssn,
    "NINO": nino,
    "DNI": dni,
    "CPF": cpf,
    "ADDRESS": address,
    "IP_ADDRESS": ip_address,
    "OPENAI_KEY": openai_key,
    "ANTHROPIC_KEY": anthropic_key,
    "AWS_ACCESS_KEY": aws_access_key,
    "AWS_SECRET_KEY": aws_secret_key,
    "GITHUB_TOKEN": github_token,
    "SLACK_TOKEN": slack_token,
    "GOOGLE_API_KEY": google_key,
    "JWT": jwt,
    "PRIVATE_KEY": private_key,
    "AUTH_TOKEN": auth_token,
    "URL_PASSWORD": url_password,
    "SECRET": generic_secret,
    "STRIPE_ACCESS_KEY": stripe_key,
    "SENDGRID_API_KEY": sendgrid_key,
}


# -- records ----------------------------------------------------------------------------

_USER_LINES = [
    "Hi, I need help with my order.",
    "Sure, one second.",
    "Thanks, that's all for today.",
    "I was charged twice for the same item.",
    "Can you update my details? {p}",
    "Here you go: {p}",
    "{p}",
    "Also, {p} -- please note it down.",
]
_AGENT_LINES = [
    "I'd be glad to help. Could you confirm your details?",
    "I found order #W{order} placed on 2025-06-{day:02d} for ${price}.",
    "Thanks! I've noted: {p}",
    "Let me look that up with get_order_details.",
    "Your refund of ${price} was issued (R-{ref:04d}).",
]
_ERRORS = [
    "openai.AuthenticationError: Error code: 401 - "
    "{{'error': {{'message': '{p}', 'type': 'invalid_request_error'}}}}",
    'Traceback (most recent call last):\n  File "/srv/agent/run.py", line {line}, in call\n'
    "    resp = client.post(url, json=payload)\nRuntimeError: request failed ({p})",
    "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) {p}",
    "httpx.HTTPStatusError: Client error '403 Forbidden' for url "
    "'https://api.acme.io/v2/customers/{order}': {p}",
    "ValueError: could not parse field: {p}",
    "tool get_user_details failed: {p}",
]


def _phrase(rng: random.Random, kinds: list[str]) -> Planted:
    return GENERATORS[rng.choice(kinds)](rng)


def _fill(rng: random.Random, template: str, p: str) -> str:
    return template.format(
        p=p,
        order=rng.randint(1000000, 9999999),
        day=rng.randint(1, 28),
        price=f"{rng.randint(5, 900)}.{rng.randint(0, 99):02d}",
        ref=rng.randint(1, 999),
        line=rng.randint(10, 400),
    )


def _transcript(rng: random.Random, kinds: list[str]) -> Record:
    planted: list[Planted] = []
    messages: list[dict[str, Any]] = []
    for turn in range(rng.randint(3, 6)):
        item = _phrase(rng, kinds)
        planted.append(item)
        messages.append({"role": "user", "content": _fill(rng, rng.choice(_USER_LINES[4:]), item.phrase)})
        if rng.random() < 0.5:
            tool_item = _phrase(rng, kinds)
            planted.append(tool_item)
            call_id = f"call_{turn}_0"
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": call_id, "name": "get_user_details", "arguments": {"user_id": f"user_{turn}"}}
                    ],
                }
            )
            output = {
                "user_id": f"user_{turn}",
                "orders": [f"#W{rng.randint(1000000, 9999999)}"],
                "created_at": f"2025-06-{rng.randint(1, 28):02d}",
                rng.choice(["notes", "raw", "details", "log"]): f"customer wrote: {tool_item.phrase}",
            }
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": "get_user_details",
                    "content": json.dumps(output),
                }
            )
        agent_item = _phrase(rng, kinds) if rng.random() < 0.4 else None
        if agent_item:
            planted.append(agent_item)
        line = rng.choice(_AGENT_LINES[2:3] if agent_item else _AGENT_LINES)
        messages.append(
            {"role": "assistant", "content": _fill(rng, line, agent_item.phrase if agent_item else "")}
        )
    return Record(
        "transcript", {"messages": messages, "spans": [{"id": 0, "kind": "trial", "attributes": {}}]}, planted
    )


def _tool_output(rng: random.Random, kinds: list[str]) -> Record:
    items = [_phrase(rng, kinds) for _ in range(rng.randint(4, 8))]
    data: dict[str, Any] = {
        "status": "ok",
        "order_id": f"#W{rng.randint(1000000, 9999999)}",
        "total": round(rng.uniform(5, 900), 2),
        "items": [{"product_id": f"P{rng.randint(100000, 999999)}", "quantity": 1}],
    }
    containers = [
        data.setdefault("customer", {}),
        data.setdefault("payment", {}),
        data.setdefault("audit", {}),
    ]
    for i, item in enumerate(items):
        target = rng.choice(containers)
        if rng.random() < 0.6:
            target[rng.choice(["note", "raw", "text", "comment", "data"]) + f"_{i}"] = item.phrase
        elif item.kind in NATURAL_KEYS:
            # a bare value under the key a real payload would use (a bare SSN, AWS secret
            # or password is only recognisable by its name)
            target[NATURAL_KEYS[item.kind]] = item.value
        else:
            target[rng.choice(["value", "raw", "field"]) + f"_{i}"] = item.value
    return Record("tool_output", data, items)


#: Keys a real payload would hold a bare value of a kind under.
NATURAL_KEYS = {
    "SSN": "ssn",
    "CPF": "cpf",
    "PHONE": "phone",
    "AWS_SECRET_KEY": "aws_secret_access_key",
    "SECRET": "client_secret",
    "AUTH_TOKEN": "Authorization",
    "DNI": "dni",
    "NINO": "national_insurance_number",
}


def _error(rng: random.Random, kinds: list[str]) -> Record:
    items = [_phrase(rng, kinds) for _ in range(rng.randint(2, 5))]
    errors = [_fill(rng, rng.choice(_ERRORS), item.phrase) for item in items]
    data = {
        "run_id": f"run-{rng.randint(1000, 9999)}",
        "task_id": "refund-1",
        "root_cause": "MODEL",
        "errors": errors,
    }
    return Record("error", data, items)


def _add_triple(rng: random.Random, record: Record, kinds: list[str]) -> None:
    kind = rng.choice(kinds)
    gen = GENERATORS[kind]
    a = gen(rng)
    b = gen(rng)
    while b.value == a.value:
        b = gen(rng)
    record.planted.extend([a, b])
    record.data["consistency"] = [f"first {a.phrase}", f"second {b.phrase}", f"again {a.phrase}"]
    record.triple = (("consistency", 0), ("consistency", 1), ("consistency", 2))
    record.triple_kind = kind


def build_corpus(seed: int = 0, records: int = 150) -> list[Record]:
    """``records`` records (a third each: transcripts, tool outputs, errors) with planted
    values of every kind in :data:`GENERATORS`; deterministic in ``seed``."""
    rng = random.Random(seed)
    kinds = sorted(GENERATORS)
    out = []
    builders = [_transcript, _tool_output, _error]
    for i in range(records):
        record = builders[i % 3](rng, kinds)
        _add_triple(rng, record, kinds)
        out.append(record)
    return out
