"""normalize_text is cached for short texts: the cached and uncached readings agree,
and long texts (not cached) are normalised the same way."""

from __future__ import annotations

from assay.graders.matching import _CACHED_LENGTH, _normalize, _normalized, normalize_text


def test_cached_and_uncached_normalisation_agree() -> None:
    samples = ["  $1,299.00 Refund\u2014DONE ", "Ｈｅｌｌｏ  world.", "12.00 and 3.001", ""]
    for text in samples:
        assert normalize_text(text) == _normalize(text)
        assert normalize_text(text) == normalize_text(text)
    assert normalize_text("  $1,299.00 Refund\u2014DONE ") == "1299 refund-done"


def test_long_texts_are_normalised_without_the_cache() -> None:
    long = "Total: $1,299.00  " * (_CACHED_LENGTH // 10)
    before = _normalized.cache_info().currsize
    assert normalize_text(long) == _normalize(long)
    assert normalize_text(long).startswith("total: 1299 total: 1299")
    assert _normalized.cache_info().currsize == before  # a long text is not kept
