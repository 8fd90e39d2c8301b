"""Redaction config files: what they can say, and errors located at file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.redact import RedactConfigError, Redactor, load_config

GOOD = """\
redact:
  style: label
  kinds:
    IP_ADDRESS: false
    EMAIL: {style: pseudonym}
  patterns:
    - name: TICKET
      regex: 'TCK-[0-9]{5}'
  allow: [help@shop.example]
"""


def test_a_config_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "redact.yaml"
    path.write_text(GOOD)
    r = Redactor(load_config(path))
    out = r.redact("TCK-12345 from ann@x.org and help@shop.example at 203.0.113.7, card 4111111111111111")
    assert out.value == "<TICKET> from <EMAIL_1> and help@shop.example at 203.0.113.7, card <CARD>"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("kinds:\n  EMAIL: true\n  NOPE: false\n", "redact.yaml:3: kinds.NOPE: unknown kind"),
        (
            "patterns:\n  - name: X\n    regex: '('\n",
            "redact.yaml:3: patterns[0].regex: invalid regular expression",
        ),
        ("patterns:\n  - name: lower\n    regex: 'a+'\n", "redact.yaml:2: patterns[0].name"),
        (
            "patterns:\n  - name: X\n    regex: 'a+'\n    validator: nope\n",
            "redact.yaml:4: patterns[0].validator",
        ),
        ("patterns:\n  - name: X\n    regex: 'a+'\n    group: 2\n", "group 2 does not exist"),
        ("style: shout\n", "redact.yaml:1: style"),
        ("colour: blue\n", "redact.yaml:1: colour: unknown field"),
        ("style: [unclosed\n", "YAML syntax error"),
        ("- just\n- a list\n", "must be a mapping"),
    ],
)
def test_config_errors_name_file_and_line(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "redact.yaml"
    path.write_text(text)
    with pytest.raises(RedactConfigError) as info:
        load_config(path)
    assert where in str(info.value).replace(str(tmp_path) + "/", "")


def test_a_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(RedactConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


def test_a_validator_by_import_path(tmp_path: Path) -> None:
    path = tmp_path / "redact.yaml"
    path.write_text(
        "patterns:\n  - name: ODD\n    regex: 'N[0-9]+'\n    validator: 'tests.redact.test_config:odd'\n"
    )
    assert Redactor(load_config(path)).redact("N13 N12").value == "<ODD_1> N12"


def odd(value: str) -> bool:
    return int(value[1:]) % 2 == 1
