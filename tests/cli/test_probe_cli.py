"""``assay probe`` and ``assay probes`` as a user runs them, against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import CliResult, assay_main
from tests.support.fake_llm_server import FakeLLMServer, Reply

from assay.store.probes import list_probes
from assay.store.store import Store

ROOT = Path(__file__).parents[2]


def assay(*args: str) -> CliResult:
    """``assay ARGS`` in process, 120 columns wide."""
    return assay_main(*args, cwd=ROOT, env={"COLUMNS": "120"})


def test_probe_stores_and_probes_compares(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    pricing = tmp_path / "prices.yaml"
    pricing.write_text("models:\n  fake:\n    input: 1\n    output: 2\n")
    with FakeLLMServer(lambda r: Reply(text="1 2 3 4 5")) as server:
        base = f"base_url={server.openai_base_url}"
        text = assay(
            "probe", "openai:fake", "-m", base, "--requests", "3", "--pricing", str(pricing), "--store", store
        )
        assert text.returncode == 0, text.stderr
        assert "time to first token" in text.stdout and "stored as probe-openai-fake-" in text.stdout
        capped = assay("probe", "openai:fake", "-m", base, "--max-requests", "2", "--store", store, "--json")
        assert capped.returncode == 0, capped.stderr
    doc = json.loads(capped.stdout)
    assert doc["schema"] == "assay.probe/1" and doc["stopped_by"] == "request_ceiling"
    assert doc["requests_sent"] == 2 and doc["cost_usd"] is None  # no price given this time
    stored = list_probes(Store(store))
    assert [d["stopped_by"] for d in stored] == ["request_ceiling", "completed"]
    assert stored[0] == doc and stored[1]["cost_usd"] is not None
    shown = assay("probes", "--store", store)
    assert "openai:fake" in shown.stdout and "request ceiling" in shown.stdout


def test_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    for args, needle in (
        (["probe", "openai:x", "--mode", "fast"], "--mode must be"),
        (["probe", "openai:x", "-m", "cache=true"], "does not apply to a probe"),
    ):
        proc = assay(*args, "--store", store)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert needle in proc.stderr and "Traceback" not in proc.stderr
