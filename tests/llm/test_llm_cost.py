"""Usage, pricing, metering and budgets (incl. the seed's table 6-4)."""

from __future__ import annotations

import logging
from decimal import ROUND_HALF_UP, Decimal

import pytest
from tests.support.fake_llm_server import FakeLLMServer, FakeUsage, Reply, sequence

from assay.core.messages import Message
from assay.errors import SpecError
from assay.llm import (
    BudgetExceeded,
    CallRecord,
    GenerateConfig,
    Meter,
    Pricing,
    PricingTable,
    Usage,
    current_role,
    get_model,
    use_meter,
)

SONNET = Pricing(input_per_mtok=3.0, output_per_mtok=15.0, cache_read_per_mtok=0.30)
TABLE_6_4 = [  # (input incl. cached, output, cached)
    (2_500, 150, 0),
    (3_200, 120, 2_000),
    (3_800, 200, 3_200),
]


def half_up(x: float, places: int) -> float:
    """Round like the seed's table does (0.00975 → 0.0098), not banker's rounding."""
    return float(Decimal(f"{x:.10f}").quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def test_usage_fields_and_order() -> None:
    u = Usage(10, 5, 3, 2, 1)
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens) == (10, 5, 3)
    assert (u.cache_write_tokens, u.reasoning_tokens) == (2, 1)
    assert u.total_tokens == 15
    assert u.uncached_input_tokens == 5
    assert Usage(1, 1) + Usage(2, 3, 1) == Usage(3, 4, 1)


def test_pricing_cost_defaults_cache_prices_to_input_price() -> None:
    p = Pricing(2.0, 8.0)
    # 1M uncached in, 1M cache read (at input price), 1M cache write (at input price), 1M out
    assert p.cost(Usage(3_000_000, 1_000_000, 1_000_000, 1_000_000)) == pytest.approx(14.0)
    p2 = Pricing(2.0, 8.0, cache_read_per_mtok=0.5, cache_write_per_mtok=2.5)
    assert p2.cost(Usage(3_000_000, 0, 1_000_000, 1_000_000)) == pytest.approx(5.0)


def test_table_6_4_pure() -> None:
    costs = [SONNET.cost(Usage(i, o, cache_read_tokens=c)) for i, o, c in TABLE_6_4]
    assert costs == pytest.approx([0.00975, 0.0060, 0.00576], abs=1e-12)
    assert [half_up(c, 4) for c in costs] == [0.0098, 0.0060, 0.0058]
    assert half_up(sum(costs), 3) == 0.022
    no_cache_input = sum(SONNET.cost(Usage(i, 0)) for i, _, _ in TABLE_6_4)
    assert no_cache_input == pytest.approx(0.0285, abs=1e-12)
    assert half_up(no_cache_input, 3) == 0.029
    assert no_cache_input > sum(SONNET.cost(Usage(i, 0, c)) for i, _, c in TABLE_6_4)


async def test_table_6_4_through_the_wire_and_meter(server: FakeLLMServer) -> None:
    server.handler = sequence(
        *(Reply(text="ok", usage=FakeUsage(i, o, cache_read_tokens=c)) for i, o, c in TABLE_6_4)
    )
    model = get_model("openai:claude-like", base_url=server.openai_base_url, pricing=SONNET)
    meter = Meter()
    with use_meter(meter, role="agent"):
        costs = []
        for n in range(3):
            c = await model.complete([Message("user", f"round {n}")], [], GenerateConfig())
            costs.append(c.cost_usd)
    assert [half_up(c, 4) for c in costs if c is not None] == [0.0098, 0.0060, 0.0058]
    totals = meter.totals()
    assert totals.calls == 3
    assert totals.input_tokens == 9_500 and totals.cache_read_tokens == 5_200
    assert totals.output_tokens == 470
    assert totals.cost_usd is not None and half_up(totals.cost_usd, 3) == 0.022
    assert meter.by_role()["agent"] == totals


async def test_missing_usage_is_none_not_zero(server: FakeLLMServer) -> None:
    server.handler = lambda req: Reply(text="no usage here", usage=None)
    model = get_model("openai:m", base_url=server.openai_base_url, pricing=SONNET)
    meter = Meter()
    with use_meter(meter):
        for stream in (False, True):
            c = await model.complete([Message("user", "hi")], [], GenerateConfig(stream=stream))
            assert c.usage is None
            assert c.cost_usd is None
    t = meter.totals()
    assert t.missing_usage == 2
    assert t.cost_usd is None  # unknown, not 0
    assert t.known_cost_usd == 0.0
    assert all(r.usage is None for r in meter.records)


def test_meter_totals_are_none_aware_and_by_role() -> None:
    meter = Meter()

    def rec(role: str, usage: Usage | None, cost: float | None, **kw: object) -> CallRecord:
        return CallRecord(role, "m", usage, cost, 0.1, None, 0, False, 0.0, 1.0, **kw)  # type: ignore[arg-type]

    meter.record(rec("agent", Usage(100, 10), 0.5))
    meter.record(rec("user", Usage(50, 5), 0.25))
    assert meter.totals().cost_usd == pytest.approx(0.75)
    meter.record(rec("user", None, None))
    meter.record(rec("judge", Usage(1, 1), None, error="boom"))
    t = meter.totals()
    assert t.cost_usd is None and t.known_cost_usd == pytest.approx(0.75)
    assert t.total_tokens == 165 and t.missing_usage == 1 and t.errors == 1
    roles = meter.by_role()
    assert set(roles) == {"agent", "user", "judge"}
    assert roles["agent"].cost_usd == pytest.approx(0.5)
    assert roles["user"].cost_usd is None


def test_budget_check_raises_only_when_exceeded() -> None:
    meter = Meter()
    meter.record(CallRecord("agent", "m", Usage(900, 100), 0.02, 0.1, None, 0, False, 0, 1))
    meter.check(max_tokens=1000, max_cost_usd=0.02)  # at the limit: fine
    with pytest.raises(BudgetExceeded) as exc:
        meter.check(max_tokens=999)
    assert exc.value.kind == "tokens" and exc.value.used == 1000
    with pytest.raises(BudgetExceeded) as exc2:
        meter.check(max_cost_usd=0.015)
    assert exc2.value.kind == "cost"
    meter.check()  # no limits: never raises


async def test_budget_after_calls_through_the_model(server: FakeLLMServer) -> None:
    server.handler = lambda req: Reply(text="x", usage=FakeUsage(1_000, 100))
    model = get_model("openai:m", base_url=server.openai_base_url, pricing=SONNET)
    meter = Meter()
    with use_meter(meter):
        await model.complete([Message("user", "a")], [], GenerateConfig(seed=1))
        meter.check(max_tokens=2_000)
        await model.complete([Message("user", "b")], [], GenerateConfig(seed=2))
        with pytest.raises(BudgetExceeded):
            meter.check(max_tokens=2_000)


async def test_roles_nest_and_model_role_overrides(server: FakeLLMServer) -> None:
    meter = Meter()
    seen: list[CallRecord] = []
    meter.on_record = seen.append
    agent = get_model("openai:a", base_url=server.openai_base_url)
    judge = get_model("openai:j", base_url=server.openai_base_url, role="judge")
    with use_meter(meter, role="agent"):
        await agent.complete([Message("user", "1")], [], GenerateConfig())
        with use_meter(None, role="user"):
            assert current_role() == "user"
            await agent.complete([Message("user", "2")], [], GenerateConfig())
        await judge.complete([Message("user", "3")], [], GenerateConfig())
    assert [r.role for r in seen] == ["agent", "user", "judge"]
    assert [r.source for r in seen] == ["network"] * 3
    # outside any meter: nothing recorded, no error
    await agent.complete([Message("user", "4")], [], GenerateConfig())
    assert len(meter.records) == 3


def test_pricing_table_lookup_and_overrides(
    tmp_path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    table = PricingTable.bundled()
    assert table.find("gpt-4o") is not None
    assert table.find("openai:gpt-4o-2024-08-06") == table.find("gpt-4o")
    assert table.find("gpt-4o-mini") != table.find("gpt-4o")
    assert table.find("gpt-4o-unknown-variant") is None
    user = tmp_path / "prices.yaml"
    user.write_text(
        "models:\n  my-local:\n    input: 0\n    output: 0\n  gpt-4o:\n    input: 1\n    output: 2\n"
    )
    monkeypatch.setenv("ASSAY_PRICING", str(user))
    loaded = PricingTable.load()
    assert loaded.find("my-local") == Pricing(0.0, 0.0)
    assert loaded.find("gpt-4o") == Pricing(1.0, 2.0)
    with caplog.at_level(logging.WARNING, logger="assay.llm"):
        assert loaded.lookup("mystery-model") is None
        assert loaded.lookup("mystery-model") is None
    assert sum("mystery-model" in r.getMessage() for r in caplog.records) == 1


def test_pricing_file_errors_are_spec_errors(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("models:\n  m:\n    input: 1\n")
    with pytest.raises(SpecError, match="missing field 'output'"):
        PricingTable.load(bad)
    bad.write_text("models:\n  m:\n    input: 1\n    output: 2\n    cached: 3\n")
    with pytest.raises(SpecError, match="unknown field 'cached'"):
        PricingTable.load(bad)
    with pytest.raises(SpecError, match="cannot read"):
        PricingTable.load(tmp_path / "missing.yaml")


async def test_unknown_model_cost_is_none(server: FakeLLMServer) -> None:
    model = get_model("openai:some-local-model", base_url=server.openai_base_url)
    c = await model.complete([Message("user", "hi")], [], GenerateConfig())
    assert c.usage is not None and c.cost_usd is None
