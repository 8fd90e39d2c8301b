"""Where the tau2-bench material lives: ``$ASSAY_TAU2_DATA``, else ``../shared/tau2``
next to the repository. Without it these tests are skipped with the reason (a clone
elsewhere runs the rest); CI sets ``ASSAY_NO_SKIPS=1``, which turns the skips into
failures, so there they never pass without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.domains.tau2 import Tau2Domain, tau2_domain

REPO = Path(__file__).resolve().parents[3]


def tau2_root() -> Path:
    configured = os.environ.get("ASSAY_TAU2_DATA")
    root = Path(configured) if configured else REPO.parent / "shared" / "tau2"
    if not (root / "data" / "domains").is_dir() or not (root / "simulations").is_dir():
        pytest.skip(
            f"tau2-bench material not found at {root} (needs data/domains/ and simulations/): "
            "set ASSAY_TAU2_DATA to the folder holding tau2's data/ and simulations/"
        )
    return root


@pytest.fixture(scope="session")
def root() -> Path:
    return tau2_root()


@pytest.fixture(scope="session")
def data_dir(root: Path) -> Path:
    return root / "data"


@pytest.fixture(scope="session")
def airline(data_dir: Path) -> Tau2Domain:
    return tau2_domain("airline", data_dir)


@pytest.fixture(scope="session")
def retail(data_dir: Path) -> Tau2Domain:
    return tau2_domain("retail", data_dir)


@pytest.fixture(scope="session")
def telecom(data_dir: Path) -> Tau2Domain:
    return tau2_domain("telecom", data_dir)


@pytest.fixture(scope="session")
def mock(data_dir: Path) -> Tau2Domain:
    return tau2_domain("mock", data_dir)
