"""Checksums and plausibility checks that turn a pattern match into a finding.

Each check takes the matched text (separators included) and returns whether it is a
real instance of its kind: a payment card passes the Luhn check and has a known issuer
prefix, an IBAN has its country's length and passes ISO 13616 mod-97, a Spanish DNI/NIE
has the right control letter, a Brazilian CPF both mod-11 check digits.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

_NON_DIGIT = re.compile(r"\D")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")


def digits(text: str) -> str:
    """Only the digits of ``text``."""
    return _NON_DIGIT.sub("", text)


def alnum(text: str) -> str:
    """Only the letters and digits of ``text``."""
    return _NON_ALNUM.sub("", text)


def luhn_ok(number: str) -> bool:
    """The Luhn (mod 10) check over the digits of ``number``."""
    ds = digits(number)
    if not ds:
        return False
    total = 0
    for i, ch in enumerate(reversed(ds)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


#: Issuer prefixes (first digits) of the card networks, with their lengths.
_CARD_PREFIXES = re.compile(
    r"^(?:4\d{12}(?:\d{3}){0,2}"  # Visa: 13, 16, 19
    r"|(?:5[1-5]\d{2}|222[1-9]|22[3-9]\d|2[3-6]\d{2}|27[01]\d|2720)\d{12}"  # Mastercard: 16
    r"|3[47]\d{13}"  # American Express: 15
    r"|3(?:0[0-5]|[68]\d)\d{11,16}"  # Diners Club: 14-19
    r"|(?:6011|65\d{2}|64[4-9]\d)\d{12,15}"  # Discover: 16-19
    r"|35(?:2[89]|[3-8]\d)\d{12,15}"  # JCB: 16-19
    r"|62\d{14,17}"  # UnionPay: 16-19
    r"|(?:5[06-8]|6\d)\d{10,17})$"  # Maestro: 12-19
)


def card_ok(text: str) -> bool:
    """A payment card number: 13-19 digits, a known issuer prefix, Luhn-valid."""
    ds = digits(text)
    return 13 <= len(ds) <= 19 and bool(_CARD_PREFIXES.match(ds)) and luhn_ok(ds)


#: IBAN length per country (ISO 13616 registry).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_mod97(iban: str) -> int:
    """The ISO 7064 mod-97 remainder of an IBAN (1 for a valid one)."""
    s = alnum(iban).upper()
    rearranged = s[4:] + s[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97


def iban_ok(text: str) -> bool:
    """An IBAN: a known country, that country's length, mod-97 remainder 1."""
    s = alnum(text).upper()
    if len(s) < 15 or not s[:2].isalpha() or not s[2:4].isdigit():
        return False
    return IBAN_LENGTHS.get(s[:2]) == len(s) and iban_mod97(s) == 1


def ssn_ok(text: str) -> bool:
    """A US Social Security number: area not 000, 666 or 9xx; group and serial not zero."""
    ds = digits(text)
    if len(ds) != 9:
        return False
    area, group, serial = ds[:3], ds[3:5], ds[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def dni_ok(text: str) -> bool:
    """A Spanish DNI (8 digits + letter) or NIE (X/Y/Z + 7 digits + letter): the letter is
    ``TRWAGMYFPDXBNJZSQVHLCKE[number mod 23]``."""
    s = alnum(text).upper()
    if len(s) != 9:
        return False
    body, letter = s[:8], s[8]
    if body[0] in "XYZ":
        body = str("XYZ".index(body[0])) + body[1:]
    return body.isdigit() and _DNI_LETTERS[int(body) % 23] == letter


def cpf_ok(text: str) -> bool:
    """A Brazilian CPF: 11 digits, not all equal, both mod-11 check digits right."""
    ds = digits(text)
    if len(ds) != 11 or len(set(ds)) == 1:
        return False
    nums = [int(c) for c in ds]
    for n in (9, 10):
        total = sum(nums[i] * (n + 1 - i) for i in range(n))
        check = (total * 10) % 11 % 10
        if nums[n] != check:
            return False
    return True


def ipv4_ok(text: str) -> bool:
    """An IPv4 address that can point at a person or a host: not unspecified (0.0.0.0),
    loopback (127.x) or broadcast."""
    try:
        ip = ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return not (ip.is_unspecified or ip.is_loopback or ip == ipaddress.IPv4Address("255.255.255.255"))


def ipv6_ok(text: str) -> bool:
    """An IPv6 address with at least three hex groups; not loopback or unspecified."""
    try:
        ip = ipaddress.IPv6Address(text)
    except ValueError:
        return False
    groups = [g for g in text.split(":") if g]
    return len(groups) >= 3 and not (ip.is_loopback or ip.is_unspecified)


def digit_count(low: int, high: int) -> Callable[[str], bool]:
    """A check that the match holds between ``low`` and ``high`` digits."""

    def check(text: str) -> bool:
        return low <= len(digits(text)) <= high

    return check


#: Checks a custom pattern may name as its ``validator``.
NAMED_CHECKS: dict[str, Callable[[str], bool]] = {
    "luhn": luhn_ok,
    "card": card_ok,
    "iban": iban_ok,
    "mod97": lambda text: len(alnum(text)) > 4 and iban_mod97(text) == 1,
    "ssn": ssn_ok,
    "dni": dni_ok,
    "cpf": cpf_ok,
    "ipv4": ipv4_ok,
    "ipv6": ipv6_ok,
}
