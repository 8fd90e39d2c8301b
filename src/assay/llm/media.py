"""Binary message parts (images, audio) in requests.

Each provider builds its own native content parts from a :class:`~assay.core.messages.Media`
(OpenAI: ``image_url`` with a ``data:`` URL and ``input_audio``; Anthropic: ``image``
blocks with a ``base64`` source). What request hashes, cassettes and the response cache
see is the *keyed* request: the same body with every binary payload replaced by a
reference to its content hash, so a cassette never holds megabytes of base64 and a
replay matches exactly the bytes that were recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.core.messages import Media, Message

from .errors import UnsupportedInput

#: OpenAI ``input_audio.format`` of each audio media type.
OPENAI_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}


def has_media(messages: Sequence[Message]) -> bool:
    return any(m.media for m in messages)


def media_ref(media: Media) -> str:
    """The stand-in of a binary part in a keyed request."""
    return f"<media {media.media_type} sha256={media.sha256} bytes={len(media.data)}>"


def check_media_roles(messages: Sequence[Message], provider: str, model: str) -> None:
    """Media ride on user messages only (as both APIs take them)."""
    for i, m in enumerate(messages):
        if m.media and m.role != "user":
            raise UnsupportedInput(
                f"{provider}:{model}: message {i} ({m.role}) carries media; images and audio "
                "go on user messages only",
                model=f"{provider}:{model}",
                modality=m.media[0].kind,
            )


def keyed_request(request: dict[str, Any], messages: Sequence[Message]) -> dict[str, Any]:
    """``request`` with each media payload of ``messages`` (its base64 text, or its
    ``data:`` URL) replaced by :func:`media_ref`. Without media, ``request`` itself."""
    table: dict[str, str] = {}
    for message in messages:
        for media in message.media:
            ref = media_ref(media)
            b64 = media.base64()
            table[b64] = ref
            table[f"data:{media.media_type};base64,{b64}"] = ref
    if not table:
        return request
    replaced = _replace(request, table)
    assert isinstance(replaced, dict)
    return replaced


def _replace(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, dict):
        return {k: _replace(v, table) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, table) for v in value]
    return value
