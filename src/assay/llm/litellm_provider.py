"""``litellm:MODEL``: any provider LiteLLM knows, in the OpenAI wire format (optional)."""

from __future__ import annotations

import importlib
import os
from typing import Any

from assay.errors import SpecError

from .openai_provider import OpenAIProvider
from .types import Usage

LITELLM_DEFAULT_ENDPOINT = "litellm"


def _import_litellm() -> Any:
    # LiteLLM fetches its model-cost map from the internet when imported unless told to use
    # the copy it ships; assay prices calls itself, so the bundled copy is always enough.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        return importlib.import_module("litellm")
    except ImportError:
        raise SpecError(
            "litellm:MODEL needs the litellm package, which is not installed: "
            "pip install 'assay[litellm]' (or use openai:MODEL with OPENAI_BASE_URL)"
        ) from None


def _usage_of(chunk: Any) -> Any:
    if isinstance(chunk, dict):
        return chunk.get("usage")
    return getattr(chunk, "usage", None)


class LiteLLMProvider(OpenAIProvider):
    """Calls ``litellm.acompletion`` (its retries off); the model string is LiteLLM's
    (``anthropic/claude-...``, ``ollama/llama3``, ...). ``base_url`` goes out as
    ``api_base``; keys come from LiteLLM's own environment variables unless given.
    The package is imported when the model is built, so a missing install fails early
    with a :class:`SpecError`."""

    name = "litellm"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None):
        self._litellm = _import_litellm()
        self.model = model
        self.base_url = base_url or os.environ.get("LITELLM_API_BASE") or None
        self.endpoint = (self.base_url or LITELLM_DEFAULT_ENDPOINT).rstrip("/")
        self._api_key = api_key
        self.max_tokens_field = "max_tokens"
        self.stream_usage = True

    async def _create(self, body: dict[str, Any], stream: bool, timeout: float | None) -> Any:
        kwargs: dict[str, Any] = dict(body)
        kwargs.update(num_retries=0, max_retries=0, timeout=timeout)
        if self.base_url is not None:
            kwargs["api_base"] = self.base_url
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        if stream:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        return await self._litellm.acompletion(**kwargs)

    def _reported_usage(self, usage: Usage | None) -> Usage | None:
        # LiteLLM fills in zeros when the server sent no usage: missing, not free.
        if usage is not None and usage.input_tokens == 0 and usage.output_tokens == 0:
            return None
        return usage

    def _stream_reported_usage(self, response: Any) -> bool:
        # When a server streams no usage, LiteLLM estimates it with its own tokenizer and
        # hands the estimate out as usage. Its stream keeps the chunks the server sent
        # (``chunks``): if none of them carried usage, the figure is LiteLLM's, not the
        # server's. Without that attribute (another LiteLLM version), trust the figure.
        chunks = getattr(response, "chunks", None)
        if not isinstance(chunks, list) or not chunks:
            return True
        return any(_usage_of(c) is not None for c in chunks)

    def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
