"""The acceptance measurements: a planted corpus (secrets and personal data of 10+ kinds in
transcripts, tool outputs and error messages) is redacted 100% with consistent
pseudonyms; clean retail transcripts get no false positives; nothing contacts a host.

Figures for docs/redaction.md come from ``python benchmarks/redaction.py`` (the same
measurements at a larger size, plus speed)."""

from __future__ import annotations

import socket

import pytest

from assay.redact import Redactor
from tests.support.planted import GENERATORS, build_corpus
from tests.support.redaction_eval import (
    measure_false_positives,
    measure_recall,
    retail_transcripts,
)


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("seed", [0, 1])
def test_planted_corpus_is_redacted_completely(redactor: Redactor, seed: int, monkeypatch) -> None:
    def no_network(*args, **kwargs):  # detect-secrets' verify step must never run
        raise AssertionError("redaction tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    corpus = build_corpus(seed, records=150)
    result = measure_recall(redactor, corpus)
    assert result.total >= 500
    assert len(result.planted) >= 10 and set(result.planted) == set(GENERATORS)
    assert set(result.by_context) == {"transcript", "tool_output", "error"}
    assert all(n >= 20 for n in result.planted.values()), result.planted
    assert result.leaks == [], result.leaks[:10]
    assert result.recall == 1.0
    assert result.triples == 150 and result.triple_failures == [], result.triple_failures[:10]


def test_the_recall_measurement_can_fail() -> None:
    # a redactor with personal data off must leak the planted personal data
    result = measure_recall(Redactor({"personal": False}), build_corpus(3, records=30))
    assert result.leaked["EMAIL"] > 0 and result.leaked["CARD"] > 0
    assert result.leaked["OPENAI_KEY"] == 0


def test_clean_retail_transcripts_have_no_false_positives(redactor: Redactor) -> None:
    docs = retail_transcripts(("builtin:retail-careful",), trials=1)
    fp = measure_false_positives(redactor, docs)
    assert fp.transcripts == len(docs) > 40
    # the retail domain's generated emails, addresses and names are personal data by design
    assert fp.personal["EMAIL"] > 50 and fp.personal["ADDRESS"] > 50 and fp.personal["PERSON_NAME"] > 50
    assert sum(fp.false.values()) == 0, fp.examples[:10]
    assert fp.rate == 0.0
    # and every occurrence of them is gone
    assert fp.personal_occurrences > 300 and fp.personal_left == 0


def test_the_false_positive_measurement_can_fail() -> None:
    # a custom pattern that takes order ids and dates: every hit is a false positive
    noisy = Redactor(
        {"patterns": [{"name": "ORDER", "regex": r"#W\d{7}"}, {"name": "DAY", "regex": r"\d{4}-\d\d-\d\d"}]}
    )
    fp = measure_false_positives(noisy, retail_transcripts(("builtin:retail-careful",), trials=1)[:10])
    assert fp.false["ORDER"] > 10 and fp.false["DAY"] > 0
    assert 0 < fp.rate < 1 and fp.per_10k_words > 0
