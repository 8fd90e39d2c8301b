"""What the trial loop computes once instead of per trial or per turn: the meter
installed for the whole trial (each turn sets only its role), the configuration hash
once per run. Each must give what the per-turn/per-trial computation gave."""

from __future__ import annotations

from pathlib import Path

import assay
from assay.llm.meter import Meter, current_meter, current_role, use_meter


def test_use_meter_restores_what_was_there_when_the_value_is_already_set() -> None:
    trial, other = Meter(), Meter()
    assert current_meter() is None
    with use_meter(trial):
        with use_meter(trial, "user"):  # the same meter: only the role is set
            assert current_meter() is trial and current_role() == "user"
            with use_meter(trial, "user"):
                assert current_role() == "user"
            assert current_role() == "user"
            with use_meter(other, "judge"):
                assert current_meter() is other and current_role() == "judge"
            assert current_meter() is trial and current_role() == "user"
        assert current_meter() is trial and current_role() == "agent"
    assert current_meter() is None and current_role() == "agent"


def test_a_meter_counts_its_calls_without_copying_them() -> None:
    meter = Meter()
    assert meter.calls == 0 and meter.totals().calls == 0


TRIVIAL = """\
name: two
tasks:
  - id: t
    instances: 3
    user: {opening: "Say hello."}
    graders:
      - text: {contains: hello}
"""


def hello(conversation: object) -> str:
    return "hello"


def test_trials_carry_the_run_configuration_hash(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(TRIVIAL)
    run = assay.run(
        tmp_path, agent="python:tests.runner.test_hot_path:hello", trials=2, store=str(tmp_path / "s.db")
    )
    assert run.info.config_hash == run.info.config.hash
    assert {r.config_hash for r in run.results} == {run.info.config.hash}
    assert len(run.results) == 6


def test_a_meter_scope_restores_the_meter_when_the_block_raises() -> None:
    trial = Meter()
    try:
        with use_meter(trial, "judge"):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert current_meter() is None and current_role() == "agent"


def test_the_agent_context_makes_its_generator_on_first_use_from_the_trial_seed() -> None:
    import random
    from datetime import datetime

    from assay.agents.base import AgentContext

    ctx = AgentContext(1234, "retail", "", datetime(2025, 1, 1), "UTC")
    assert "rng" not in vars(ctx)  # most agents never draw: no generator is seeded for them
    draws = [ctx.rng.random() for _ in range(3)]
    expected = random.Random(1234)
    assert draws == [expected.random() for _ in range(3)]
    assert ctx.rng is ctx.rng


def test_payloads_are_zstandard_frames_and_zlib_streams_written_before_still_read() -> None:
    import os
    import zlib

    from assay.store.codec import compress, decode_transcript, decompress, encode_transcript

    for size in (0, 1, 300, 511, 512, 513, 40_000, 300_000):
        data = os.urandom(size // 2) + b"a" * (size - size // 2)
        packed = compress(data)
        assert packed[:4] == b"\x28\xb5\x2f\xfd"  # a Zstandard frame, whole
        assert decompress(packed) == data
        assert packed[4] & 0b100  # its header says the frame ends with a content checksum
        for bits in (9, 12, 15):  # what stores held before: zlib streams of any window
            packer = zlib.compressobj(1, zlib.DEFLATED, bits)
            assert decompress(packer.compress(data) + packer.flush()) == data
    from pydantic import TypeAdapter

    from assay.core.transcript import Transcript

    transcript = Transcript([], [], "2026-01-01T00:00:00.000+00:00", {})
    assert decode_transcript(encode_transcript(transcript)) == transcript
    legacy = zlib.compress(TypeAdapter(Transcript).dump_json(transcript), 1)
    assert decode_transcript(legacy) == transcript  # rows written before still read


def test_one_compressor_serves_threads_at_once_each_payload_a_whole_frame() -> None:
    """The writer thread, an import and a resume may compress at the same time: the
    process's one compressor gives each call a frame of its own."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from assay.store.codec import compress, decompress

    payloads = [os.urandom(i % 97) + b"x" * (i * 37 % 5000) for i in range(800)]
    with ThreadPoolExecutor(4) as pool:
        packed = list(pool.map(compress, payloads))
    assert [decompress(p) for p in packed] == payloads
