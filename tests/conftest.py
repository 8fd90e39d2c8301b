from __future__ import annotations

import pytest

from assay.envs import DOMAINS
from tests.toydomain import DOMAIN as TOY

DOMAINS.register("toy", TOY)


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    """Every test gets its own default store, so nothing lands in the checkout."""
    monkeypatch.setenv("ASSAY_STORE", str(tmp_path / "assay.db"))
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
