"""Fixtures of the trace tests: a flaky-agent retail run exported as OTLP-JSON and
imported (``recorded``), an LLM-agent retail run behind the fake endpoint, and a real
Arize Phoenix (module-scoped: it takes a while to start)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.store import Store
from tests.support.cli import assay_main
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.phoenix import PhoenixServer, phoenix_executable
from tests.support.scripted_brain import brain

PRICING = "models:\n  scripted: {input: 3.0, output: 15.0, cache_read: 0.3}\n"
LLM_TASKS = ["refund-in-window-email", "cancel-pending", "refund-15-days-old"]
TASKS = [
    "refund-in-window-email",
    "refund-in-window-name-zip",
    "cancel-pending",
    "address-change",
    "refund-15-days-old",
    "approved-claim",
    "injection-old-order",
    "human-request",
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A flaky-agent run (rewards 0 and 1), exported without redaction and imported."""
    tmp = tmp_path_factory.mktemp("replay")
    store = str(tmp / "assay.db")
    run = assay.run(
        "retail",
        agent="builtin:retail-flaky",
        params={"slip": 0.35},
        trials=1,
        task_ids=TASKS,
        store=store,
        run_id="orig",
    )
    otlp = tmp / "orig.otlp.jsonl"
    out = assay_main("export-traces", "orig", "-o", str(otlp), "--no-redact", "--store", store)
    assert out.code == 0, out.stderr
    suite = tmp / "replayed"
    imported = assay_main("import", "traces", str(otlp), "-o", str(suite), "--no-redact", "--json")
    assert imported.code == 0, imported.stderr
    return {"run": run, "store": store, "suite": suite, "tmp": tmp, "import": json.loads(imported.stdout)}


def jsonl_conversations(recorded: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded run's transcripts in the simple JSONL format, without assay metadata."""
    st = Store(recorded["store"])
    lines = []
    for task_id in st.task_ids("orig"):
        t = st.load_transcripts("orig", task_id)[0]
        messages: list[dict[str, Any]] = []
        for m in t.messages:
            msg: dict[str, Any] = {"role": m.role, "content": m.content}
            if m.tool_calls:  # OpenAI's wire form: arguments as a JSON string
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in m.tool_calls
                ]
            if m.role == "tool":
                msg["tool_call_id"] = m.tool_call_id
                msg["error"] = m.error
            messages.append(msg)
        lines.append({"id": f"conv-{task_id}", "messages": messages})
    return lines


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
