"""``litellm:MODEL``: any provider LiteLLM knows, in the OpenAI wire format (optional)."""

from __future__ import annotations

import importlib
import os
from typing import Any

from assay.errors import SpecError

from .openai_provider import OpenAIProvider

LITELLM_DEFAULT_ENDPOINT = "litellm"


def _import_litellm() -> Any:
    try:
        return importlib.import_module("litellm")
    except ImportError:
        raise SpecError(
            "litellm:MODEL needs the litellm package, which is not installed: "
            "pip install 'assay[litellm]' (or use openai:MODEL with OPENAI_BASE_URL)"
        ) from None


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

    def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
