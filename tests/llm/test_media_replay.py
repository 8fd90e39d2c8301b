"""Images and audio through the response cache and cassettes: keyed by content hash,
no base64 in the cassette, exact replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.fake_llm_server import FakeLLMServer

from assay.core.messages import Media, Message
from assay.llm import Cassette, CassetteMiss, GenerateConfig, get_model, use_cassette

MEDIA_DIR = Path(__file__).parent / "fixtures" / "media"
PNG = Media("image/png", (MEDIA_DIR / "square.png").read_bytes(), "square.png")
WAV = Media("audio/wav", (MEDIA_DIR / "beep.wav").read_bytes(), "beep.wav")
CONFIG = GenerateConfig(temperature=0.0, seed=1)


def numbered(server: FakeLLMServer) -> None:
    server.handler = lambda req: f"answer {server.request_count}"


def ask(*media: Media) -> list[Message]:
    return [Message("user", "Grade this.", media=list(media))]


def big_png(seed: int) -> Media:
    """A PNG of about 200 KB (noise does not compress)."""
    import random

    rng = random.Random(seed)
    return Media("image/png", b"\x89PNG\r\n\x1a\n" + rng.randbytes(200_000), f"noise{seed}.png")


async def test_cache_keys_media_by_content(server: FakeLLMServer, tmp_path: Path) -> None:
    numbered(server)
    model = get_model("openai:gpt-4o", base_url=server.openai_base_url, cache=tmp_path / "c.sqlite")
    first = await model.complete(ask(PNG, WAV), [], CONFIG)
    again = await model.complete(ask(Media("image/png", bytes(PNG.data), "renamed.png"), WAV), [], CONFIG)
    assert again.cached and again.text == first.text and server.request_count == 1
    changed = Media("image/png", PNG.data[:-1] + b"\x00", "square.png")
    other = await model.complete(ask(changed, WAV), [], CONFIG)
    assert not other.cached and server.request_count == 2 and other.text != first.text
    swapped = await model.complete(ask(WAV, PNG), [], CONFIG)  # the order of parts matters
    assert not swapped.cached and server.request_count == 3


async def test_cassette_replays_media_exactly_without_base64(server: FakeLLMServer, tmp_path: Path) -> None:
    numbered(server)
    path = tmp_path / "run.cassette.jsonl"
    images = [big_png(1), big_png(2)]
    model = get_model("openai:gpt-4o", base_url=server.openai_base_url)
    with use_cassette(Cassette(path, "record")):
        recorded = [(await model.complete(ask(img), [], CONFIG)).text for img in images]
    assert server.request_count == 2
    text = path.read_text()
    assert len(text) < 5_000  # two 200 KB images, yet no payload in the file
    assert images[0].base64()[:200] not in text
    entry = json.loads(text.splitlines()[0])
    part = entry["request"]["messages"][0]["content"][1]
    ref = f"<media image/png sha256={images[0].sha256} bytes=200008>"
    assert part == {"type": "image_url", "image_url": {"url": ref}}

    offline = get_model("openai:gpt-4o", base_url="http://127.0.0.1:9")  # nothing listens there
    with use_cassette(Cassette(path, "replay")):
        replayed = [(await offline.complete(ask(img), [], CONFIG)).text for img in reversed(images)]
        assert replayed == list(reversed(recorded))
        with pytest.raises(CassetteMiss, match="not in the cassette"):
            await offline.complete(ask(big_png(3)), [], CONFIG)
    assert server.request_count == 2


def test_stored_transcripts_do_not_carry_media() -> None:
    """Transcripts and run records keep their format: media parts are left out."""
    from assay.core.transcript import Transcript
    from assay.store.codec import decode_transcript, decompress, encode_transcript

    plain = Transcript([Message("user", "Grade this.")])
    with_media = Transcript([Message("user", "Grade this.", media=[PNG, WAV])])
    assert encode_transcript(with_media) == encode_transcript(plain)
    assert b"media" not in decompress(encode_transcript(with_media))
    assert decode_transcript(encode_transcript(with_media)).messages[0].media == []
