"""Conversation records. Plain slotted dataclasses: they are built inside the trial loop."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

Role = Literal["system", "user", "assistant", "tool"]
Modality = Literal["text", "image", "audio"]

#: Media types a :class:`Media` part may have, and the modality of each.
MEDIA_TYPES: dict[str, Modality] = {
    "image/png": "image",
    "image/jpeg": "image",
    "image/gif": "image",
    "image/webp": "image",
    "audio/wav": "audio",
    "audio/mpeg": "audio",
}


Requestor = Literal["agent", "user"]


@dataclass(slots=True)
class ToolCall:
    """A call the agent (or, dual control, the user: ``requestor="user"``) asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    requestor: Requestor = "agent"


@dataclass(frozen=True, slots=True)
class Media:
    """A binary part of a message: an image or an audio clip, as bytes.

    ``media_type`` is one of :data:`MEDIA_TYPES`; ``name`` says where it came from (a
    file name), for the reader. Providers send it in their native format; request hashes,
    cassettes and the cache know it by :attr:`sha256`, never by its bytes."""

    media_type: str
    data: bytes
    name: str = ""

    def __post_init__(self) -> None:
        if self.media_type not in MEDIA_TYPES:
            known = ", ".join(MEDIA_TYPES)
            raise ValueError(f"media type {self.media_type!r} is not one of {known}")

    @property
    def kind(self) -> Modality:
        """``image`` or ``audio``."""
        return MEDIA_TYPES[self.media_type]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"

    def __repr__(self) -> str:
        size = len(self.data)
        return f"Media({self.media_type!r}, {size} bytes, sha256={self.sha256[:12]}, name={self.name!r})"


@dataclass(slots=True)
class Message:
    """One message. ``role='tool'`` messages carry a tool result for ``tool_call_id``;
    ``error`` marks a tool result that is an error message. A ``user`` message may carry
    tool calls too (dual control: the user acting on their own tools), answered by the
    ``tool`` messages that follow it."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    error: bool = False
    images: list[str] = field(default_factory=list)
    """Image parts (URLs or ``data:`` URIs) that accompany ``content``."""
    media: Annotated[list[Media], Field(exclude=True), SkipJsonSchema()] = field(default_factory=list)
    """Binary parts (images, audio) that accompany ``content``, in order, after ``images``.
    User messages only: providers refuse them elsewhere. Not stored with transcripts
    (stored transcripts and run records are as before); request hashes, cassettes and
    the cache know each part by its SHA-256."""

    @property
    def text(self) -> str:
        return self.content


@dataclass(slots=True)
class ToolSpec:
    """A tool as the agent sees it: name, description and JSON schema of arguments."""

    name: str
    description: str
    parameters: dict[str, Any]
    write: bool = False

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
