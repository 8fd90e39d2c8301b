"""Provider-neutral chat layer: models, usage and cost, metering, budgets, retries,
rate limits, response cache and record/replay cassettes.

Imports only the standard library, third-party packages, ``assay.core`` and
``assay.errors``. The provider SDKs (openai, anthropic, litellm) load on first use.
"""

from .cache import DEFAULT_CACHE_PATH, ResponseCache, default_cache_path, open_cache
from .cassette import Cassette, current_cassette, use_cassette
from .deadline import TrialClock, current_clock, use_clock
from .errors import (
    AdapterError,
    BudgetExceeded,
    CassetteError,
    CassetteMiss,
    EndpointUnreachable,
    MalformedResponse,
    ModelRequestRejected,
    ModelUnavailable,
)
from .limits import Limiter, LimitSettings, TokenBucket
from .meter import CallRecord, Meter, Totals, current_meter, current_role, use_meter
from .model import LLMModel, request_hash
from .pricing import PRICING_ENV, Pricing, PricingTable, default_pricing, parse_pricing
from .retry import RetryPolicy, classify, parse_retry_after
from .spec import PROVIDERS, ChatModel, get_model, parse_spec, shared_model
from .types import (
    Completion,
    GenerateConfig,
    MalformedOutput,
    Usage,
    parse_tool_arguments,
)

__all__ = [
    "DEFAULT_CACHE_PATH",
    "PRICING_ENV",
    "PROVIDERS",
    "AdapterError",
    "BudgetExceeded",
    "CallRecord",
    "Cassette",
    "CassetteError",
    "CassetteMiss",
    "ChatModel",
    "Completion",
    "EndpointUnreachable",
    "GenerateConfig",
    "LLMModel",
    "LimitSettings",
    "Limiter",
    "MalformedOutput",
    "MalformedResponse",
    "Meter",
    "ModelRequestRejected",
    "ModelUnavailable",
    "Pricing",
    "PricingTable",
    "ResponseCache",
    "RetryPolicy",
    "TokenBucket",
    "Totals",
    "TrialClock",
    "Usage",
    "classify",
    "current_cassette",
    "current_clock",
    "current_meter",
    "current_role",
    "default_cache_path",
    "default_pricing",
    "get_model",
    "open_cache",
    "parse_pricing",
    "parse_retry_after",
    "parse_spec",
    "parse_tool_arguments",
    "request_hash",
    "shared_model",
    "use_cassette",
    "use_clock",
    "use_meter",
]
