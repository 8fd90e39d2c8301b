"""Where the tau2 material is: ``ASSAY_TAU2_DATA`` (a tau2 folder holding ``data/``, a
tau2 data folder, or the banking_knowledge folder itself), else ``<repo>/../shared/tau2``.
Missing material skips the tests that need it, with the reason; CI sets
``ASSAY_NO_SKIPS=1``, which turns those skips into failures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.domains.tau2.banking_kb import KnowledgeBaseError, find_banking_dir

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="session")
def banking_dir() -> Path:
    given = os.environ.get("ASSAY_TAU2_DATA")
    where = Path(given) if given else ROOT.parent / "shared" / "tau2"
    try:
        return find_banking_dir(where)
    except KnowledgeBaseError as exc:
        pytest.skip(
            f"tau2's banking_knowledge material is needed and was not found ({exc}); "
            "set ASSAY_TAU2_DATA to the tau2 folder (e.g. /work/shared/tau2)"
        )


@pytest.fixture(scope="session")
def banking_suite(banking_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from assay.domains.tau2.banking_knowledge import import_banking_knowledge

    return import_banking_knowledge(banking_dir, tmp_path_factory.mktemp("suites") / "banking")
