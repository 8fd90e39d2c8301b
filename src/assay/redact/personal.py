"""Personal-data detectors: emails, phone numbers, payment cards, IBANs, national ids
(US SSN, UK National Insurance number, Spanish DNI/NIE, Brazilian CPF), street
addresses and IP addresses.

Numbers are matched in their written formats and confirmed by a checksum where one
exists (Luhn for cards, mod-97 for IBANs, the DNI control letter, the CPF check
digits); a bare run of digits counts as a phone, SSN or CPF only after a word that says
so (``phone:``, ``SSN``, ``CPF``), so order numbers, prices, dates and ids stay.
"""

from __future__ import annotations

import re

from . import checks
from .detectors import PERSONAL, Detector

_FILE_EXTENSIONS = frozenset(
    "png jpg jpeg gif svg webp bmp ico css js ts json py txt md html xml yaml yml csv pdf zip".split()  # noqa: SIM905
)


def _email_ok(value: str) -> bool:
    return value.rsplit(".", 1)[-1].lower() not in _FILE_EXTENSIONS


def _lower(value: str) -> str:
    return value.lower()


def _upper_alnum(value: str) -> str:
    return checks.alnum(value).upper()


def _international_ok(value: str) -> bool:
    """8-16 digits, and not a signed decimal number (``+35236450.6``)."""
    return 8 <= len(checks.digits(value)) <= 16 and value.count(".") != 1


def _nanp_ok(value: str) -> bool:
    ds = checks.digits(value)
    if len(ds) == 11:
        ds = ds[1:]
    return len(ds) == 10 and ds[0] in "23456789" and ds[3] in "23456789"


def _iban_fit(value: str) -> int | None:
    """Length (in characters of ``value``) of the valid IBAN it starts with, if any."""
    compact = checks.alnum(value).upper()
    want = checks.IBAN_LENGTHS.get(compact[:2])
    if want is None or len(compact) < want or not checks.iban_ok(compact[:want]):
        return None
    seen = 0
    for i, ch in enumerate(value):
        if ch.isalnum():
            seen += 1
            if seen == want:
                return i + 1
    return None  # pragma: no cover - the loop always reaches ``want``


def _ipv6_fit(value: str) -> int | None:
    """An IPv6 address, or one followed by ``:port`` (the last group dropped)."""
    if checks.ipv6_ok(value):
        return len(value)
    head = value.rsplit(":", 1)[0]
    return len(head) if ":" in value and checks.ipv6_ok(head) else None


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_NUM = r"\d{1,6}(?:-\d{1,4})?[A-Za-z]?"
_DIR = r"(?:[NSEW]\.?|North|South|East|West|N[EW]|S[EW])"
_NAME = r"(?:[A-Z][A-Za-z'’-]*|\d{1,3}(?:st|nd|rd|th))"
_SUFFIX = (
    r"(?i:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl"
    r"|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Plaza|Alley|Crescent"
    r"|Close|Row|Walk|View|Loop|Path|Pike|Mews|Grove|Gardens|Broadway)"
)
_UNIT = r"(?:,?\s+(?i:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|Room|Rm|#)\.?\s*#?[A-Za-z0-9-]{1,6}\b)?"
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"
_CITY = r"[A-Z][a-z][A-Za-z.'’-]*(?:\s+[A-Z][a-z][A-Za-z.'’-]*){0,3}"
_US_TAIL = (
    rf"(?:,\s*{_CITY}(?:,\s*[A-Z]{{2}}(?:\s+\d{{5}}(?:-\d{{4}})?)?|\s+[A-Z]{{2}}\s+\d{{5}}(?:-\d{{4}})?"
    rf"|,?\s+{_UK_POSTCODE}\b)?)?"
)
_STREET = (
    rf"(?<![\w#.-]){_NUM}\s+(?:{_DIR}\s+)?(?:{_NAME}\s+){{1,4}}{_SUFFIX}\b\.?(?:\s+{_DIR}\b\.?)?"
    + _UNIT
    + _US_TAIL
)
#: A letter as written, or as a JSON ``\\u00XX`` escape (tool outputs are often JSON text).
_UP = r"(?:[A-ZÀ-ÖØ-Þ]|\\u00[cdCD][0-9a-fA-F])"
_LO = r"(?:[a-zß-öø-ÿœ]|\\u00(?:[eEfF][0-9a-fA-F]|[dD][fF])|\\u0153)"
_WORD = rf"{_UP}(?:{_LO}|[A-Za-z'’-])+"
_SS = r"(?:ß|\\u00df|ss)"
_DE_WORD = rf"{_UP}{_LO}+(?:-{_UP}?{_LO}+)*"
_DE_STREET = (
    rf"(?<![\w-])(?:{_DE_WORD}(?:stra{_SS}e|str\.|weg|gasse|platz|allee|ring|damm|ufer)"
    rf"|(?:{_DE_WORD}\s+)?(?:Stra{_SS}e|Weg|Gasse|Platz|Allee|Ring|Damm|Ufer))"
    r"\s+\d{1,4}\s?[a-zA-Z]?\b(?:,\s*\d{5}\s+" + _DE_WORD + r")?"
)
_FR_STREET = (
    r"(?<![\w-])\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?i:rue|avenue|av\.|boulevard|bd|place|chemin|all(?:é|\\u00e9)e"
    rf"|impasse|quai|route|cours)\s+(?:(?:de|du|des|la|le|l'|d')\s*)*{_WORD}"
    rf"(?:\s+(?:(?:de|du|des|la|le)\s+)?{_WORD}){{0,3}}(?:,\s*\d{{5}}\s+{_WORD})?"
)
_SOUTH_STREET = (
    r"\b(?:Calle|C/|Avenida|Avda\.?|Plaza|Paseo|Via|Viale|Piazza|Corso|Rua)\s+"
    rf"(?:(?:de|del|la|las|los|di|della|delle|dei|da|do|dos)\s+)*{_WORD}(?:\s+{_WORD}){{0,3}},?\s+"
    r"(?:n\.?\s*º?\s*)?\d{1,4}\b"
)


def personal_detectors() -> list[Detector]:
    """Assay's personal-data detectors."""
    p = PERSONAL
    digits = checks.digits
    return [
        Detector(
            "EMAIL",
            _c(
                r"(?<![\w.+%!#$&*^|~-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
                r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])"
            ),
            "personal",
            check=_email_ok,
            priority=p + 2,
            triggers=("@",),
            normalize=_lower,
        ),
        # +CC then groups: +1 415 555 0134, +44 (0)20 7946 0958, +4915112345678
        Detector(
            "PHONE",
            _c(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(0\))?(?:[ .-]?\(?\d{1,5}\)?){1,7}(?!\d|[.,]\d)"),
            "personal",
            check=_international_ok,
            priority=p,
            triggers=("+",),
            needs_digit=True,
            normalize=digits,
        ),
        # North American: (415) 555-0134, 415-555-0134, 415.555.0134, 1-415-555-0134
        Detector(
            "PHONE",
            _c(
                r"(?<![\w+.-])(?<!\d[ .])(?:1[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}"
                r"(?![\w-]|\.\d)"
            ),
            "personal",
            check=_nanp_ok,
            priority=p,
            needs_digit=True,
            normalize=digits,
        ),
        # national with trunk 0: 020 7946 0958, 07700 900123, 01 23 45 67 89, 030 12345678
        Detector(
            "PHONE",
            _c(r"(?<![\w+.,/-])(?<!\d[ .])\(?0[1-9]\d{0,3}\)?(?:[ ./-]\d{2,8}){1,4}(?![\w-]|[.,/]\d)"),
            "personal",
            check=checks.digit_count(9, 12),
            priority=p - 1,
            needs_digit=True,
            normalize=digits,
        ),
        # any digits after a word that says it is a phone number
        Detector(
            "PHONE",
            _c(
                r"\b(?:phone|tel|telephone|mobile|cell|fax|whatsapp|sms|call(?:\s+me)?(?:\s+(?:at|on))?)"
                r"(?:[\s_-]*(?:number|no\.?|#))?(?:\\{0,3}[\"'])?\s*[:=]?\s*(?:\\{0,3}[\"'])?"
                r"(\+?\d[\d ().-]{5,18}\d)(?![\d-])",
                re.I,
            ),
            "personal",
            group=1,
            check=checks.digit_count(7, 15),
            priority=p - 1,
            triggers=("phone", "tel", "mobile", "cell", "fax", "whatsapp", "sms", "call"),
            fold=True,
            needs_digit=True,
            normalize=digits,
        ),
        Detector(
            "CARD",
            _c(
                r"(?<![\d.,-])(?:\d{4}([ -]?)\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|\d{4}([ -]?)\d{6}\2\d{4,5}"
                r"|\d{13,19})(?![\d-]|[.,]\d)"
            ),
            "personal",
            check=checks.card_ok,
            priority=p + 1,
            needs_digit=True,
            normalize=digits,
        ),
        Detector(
            "IBAN",
            _c(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"),
            "personal",
            fit=_iban_fit,
            priority=p + 1,
            needs_digit=True,
            normalize=_upper_alnum,
        ),
        Detector(
            "SSN",
            _c(r"(?<![\w-])\d{3}([- ])\d{2}\1\d{4}(?![\w-])"),
            "personal",
            check=checks.ssn_ok,
            priority=p + 1,
            needs_digit=True,
            normalize=digits,
        ),
        Detector(
            "SSN",
            _c(
                r"\b(?:ssn|social\s+security(?:\s+(?:number|no\.?|#))?)(?:\\{0,3}[\"'])?[^\d\n]{0,12}"
                r"(\d{3}[- ]?\d{2}[- ]?\d{4})(?![\d-])",
                re.I,
            ),
            "personal",
            group=1,
            check=checks.ssn_ok,
            priority=p + 1,
            triggers=("ssn", "social"),
            fold=True,
            needs_digit=True,
            normalize=digits,
        ),
        Detector(
            "NINO",
            _c(
                r"(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
                r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])"
            ),
            "personal",
            priority=p,
            needs_digit=True,
            normalize=_upper_alnum,
        ),
        Detector(
            "DNI",
            _c(r"(?<![A-Za-z0-9.,-])(?:\d{8}|[XYZxyz]-?\d{7})[- ]?[A-Za-z](?![A-Za-z0-9])"),
            "personal",
            check=checks.dni_ok,
            priority=p,
            needs_digit=True,
            normalize=_upper_alnum,
        ),
        Detector(
            "CPF",
            _c(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d-])"),
            "personal",
            check=checks.cpf_ok,
            priority=p + 1,
            needs_digit=True,
            normalize=digits,
        ),
        Detector(
            "CPF",
            _c(r"\bcpf\b[^\d\n]{0,8}(\d{11})(?!\d)", re.I),
            "personal",
            group=1,
            check=checks.cpf_ok,
            priority=p + 1,
            triggers=("cpf",),
            fold=True,
            normalize=digits,
        ),
        Detector("ADDRESS", _c(_STREET), "personal", priority=p, needs_digit=True),
        Detector("ADDRESS", _c(_DE_STREET), "personal", priority=p, needs_digit=True),
        Detector("ADDRESS", _c(_FR_STREET), "personal", priority=p, needs_digit=True),
        Detector("ADDRESS", _c(_SOUTH_STREET), "personal", priority=p, needs_digit=True),
        Detector(
            "ADDRESS",
            _c(r"\b(?:P\.?\s?O\.?\s*Box|Post\s+Office\s+Box)\s+\d{1,6}\b", re.I),
            "personal",
            priority=p,
            triggers=("box",),
            fold=True,
        ),
        Detector(
            "IP_ADDRESS",
            _c(
                r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
                r"(?![\w]|\.\d)"
            ),
            "personal",
            check=checks.ipv4_ok,
            priority=p,
            triggers=(".",),
            needs_digit=True,
        ),
        Detector(
            "IP_ADDRESS",
            _c(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,8}[0-9A-Fa-f]{0,5}(?![\w:])"),
            "personal",
            fit=_ipv6_fit,
            priority=p,
            triggers=(":",),
            normalize=_lower,
        ),
    ]
