"""Fixtures of the trace tests: an LLM-agent retail run behind the fake endpoint, and a
real Arize Phoenix (module-scoped: it takes a while to start)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import assay
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.phoenix import PhoenixServer, phoenix_executable
from tests.support.scripted_brain import brain

PRICING = "models:\n  scripted: {input: 3.0, output: 15.0, cache_read: 0.3}\n"
LLM_TASKS = ["refund-in-window-email", "cancel-pending", "refund-15-days-old"]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    if phoenix_executable() is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the Phoenix tests: scripts/install-phoenix.sh sets ASSAY_PHOENIX")
        pytest.skip("no Arize Phoenix server: run scripts/install-phoenix.sh (or set ASSAY_PHOENIX)")
    with PhoenixServer(tmp_path_factory.mktemp("phoenix")) as server:
        yield server


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(brain) as srv:
        yield srv


def llm_run(srv: FakeLLMServer, tmp: Path, **fields: object) -> assay.Run:
    """The retail suite with the LLM agent and LLM user behind the fake endpoint."""
    pricing = tmp / "pricing.yaml"
    pricing.write_text(PRICING)
    options = {
        "base_url": srv.openai_base_url,
        "api_key": "test",
        "pricing": str(pricing),
        "backoff_base_s": 0.01,
    }
    fields.setdefault("task_ids", LLM_TASKS)
    return assay.run(
        "retail",
        agent="openai:scripted",
        user="openai:scripted",
        trials=1,
        model_options=options,
        store=str(tmp / "assay.db"),
        **fields,
    )
