"""Checksums cross-checked against python-stdnum on seeded random numbers, valid and not."""

from __future__ import annotations

import random

import pytest
from stdnum import iban as std_iban
from stdnum import luhn as std_luhn
from stdnum.br import cpf as std_cpf
from stdnum.es import dni as std_dni
from stdnum.es import nie as std_nie
from stdnum.us import ssn as std_ssn

from assay.redact import checks
from tests.support.planted import _iban_check, _luhn_complete


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def test_luhn_agrees_with_stdnum() -> None:
    rng = random.Random(1)
    valid = 0
    for _ in range(3000):
        number = _digits(rng, rng.randint(12, 19))
        if rng.random() < 0.5:
            number = _luhn_complete(number[:-1])
        assert checks.luhn_ok(number) == std_luhn.is_valid(number), number
        valid += checks.luhn_ok(number)
    assert 1200 < valid < 1800  # both branches exercised


def test_iban_agrees_with_stdnum() -> None:
    rng = random.Random(2)
    valid = 0
    for _ in range(2000):
        country = rng.choice(["DE", "FR", "ES", "BE", "CH", "NO", "PL", "AT", "DK", "FI"])  # numeric BBANs
        body_len = checks.IBAN_LENGTHS[country] - 4
        bban = _digits(rng, body_len)
        check = _iban_check(country, bban) if rng.random() < 0.6 else f"{rng.randint(2, 98):02d}"
        iban = country + check + bban
        if rng.random() < 0.1:
            iban = iban[:-1]  # wrong length for the country
        # stdnum also checks some countries' national check digits: compare mod-97 only
        assert checks.iban_ok(iban) == std_iban.is_valid(iban, check_country=False), iban
        valid += checks.iban_ok(iban)
    assert valid > 800
    assert checks.iban_ok("DE89 3704 0044 0532 0130 00")
    assert not checks.iban_ok("DE89 3704 0044 0532 0130 01")
    assert not checks.iban_ok("XX89370400440532013000")  # no such country


def test_dni_nie_agree_with_stdnum() -> None:
    rng = random.Random(3)
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    for _ in range(2000):
        if rng.random() < 0.5:
            body = _digits(rng, 8)
            number = body + (letters[int(body) % 23] if rng.random() < 0.5 else rng.choice(letters))
            assert checks.dni_ok(number) == std_dni.is_valid(number), number
        else:
            lead = rng.choice("XYZ")
            body = _digits(rng, 7)
            right = letters[int(str("XYZ".index(lead)) + body) % 23]
            number = lead + body + (right if rng.random() < 0.5 else rng.choice(letters))
            assert checks.dni_ok(number) == std_nie.is_valid(number), number


def test_cpf_agrees_with_stdnum() -> None:
    rng = random.Random(4)
    valid = 0
    for _ in range(3000):
        number = _digits(rng, 11)
        if rng.random() < 0.5:  # make it valid
            nums = [int(c) for c in number[:9]]
            for n in (9, 10):
                nums.append(sum(nums[i] * (n + 1 - i) for i in range(n)) * 10 % 11 % 10)
            number = "".join(map(str, nums))
        assert checks.cpf_ok(number) == std_cpf.is_valid(number), number
        valid += checks.cpf_ok(number)
    assert valid > 1000
    assert not checks.cpf_ok("111.111.111-11")


def test_ssn_agrees_with_stdnum_outside_its_blacklist() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        number = f"{_digits(rng, 3)}-{_digits(rng, 2)}-{_digits(rng, 4)}"
        if number in ("078-05-1120", "219-09-9999", "457-55-5462"):  # advertised, never issued
            continue
        assert checks.ssn_ok(number) == std_ssn.is_valid(number), number


@pytest.mark.parametrize(
    ("number", "ok"),
    [
        ("4111 1111 1111 1111", True),
        ("4111-1111-1111-1111", True),
        ("3782 822463 10005", True),  # Amex
        ("5555555555554444", True),
        ("6011111111111117", True),
        ("4111 1111 1111 1112", False),  # Luhn fails
        ("1234 5678 9012 3452", False),  # Luhn-valid, no issuer starts with 1
        ("0000000000000000", False),
    ],
)
def test_card_numbers(number: str, ok: bool) -> None:
    assert checks.card_ok(number) is ok
