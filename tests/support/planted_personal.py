"""Value generators of the planted redaction corpus (tests/support/planted.py), personal
data: one per kind, each returning a value in one of several real-world formats and a
phrase that puts it in context. Deterministic in the ``random.Random`` they are given."""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

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
