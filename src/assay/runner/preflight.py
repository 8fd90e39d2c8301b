"""Checks made before a run's first trial, so a run that cannot work fails at once with
its real cause and stores nothing: every model it will call (agent, user, judges) is
built with its options, has its credentials and, unless ``check_models`` is off,
answers a short probe of its endpoint."""

from __future__ import annotations

from typing import Any

from ..core.spec import RunSpec
from ..errors import AssayError, HarnessError, SpecError
from ..llm.check import check_model, endpoint_of
from ..llm.spec import PROVIDERS

#: Sampling settings the LLM user takes out of the model options (users/llm.py).
_USER_SAMPLING = ("temperature", "top_p", "max_tokens")


def _is_model(spec: str | None) -> bool:
    return bool(spec) and str(spec).partition(":")[0] in PROVIDERS


def models_of(spec: RunSpec) -> list[tuple[str, str, dict[str, Any]]]:
    """(role, model spec, client options) of every model the run will call."""
    models: list[tuple[str, str, dict[str, Any]]] = []
    options = spec.model_option_values()
    if _is_model(spec.agent):
        models.append(("agent", str(spec.agent), options))
    if _is_model(spec.user):
        user = {k: v for k, v in options.items() if k not in _USER_SAMPLING}
        models.append(("user", str(spec.user), user))
    for judge in spec.judges:
        models.append(("judge", judge, {"cache": True, **spec.judge_options}))
    return models


async def check_models(spec: RunSpec) -> None:
    """Raise :class:`SpecError` (exit 2) or a :class:`HarnessError` (an endpoint that
    cannot be reached, exit 3) naming the role and model; each endpoint is probed once.
    A replayed run calls no model, so it needs none of this."""
    if spec.replay:
        return
    probed: set[tuple[str, str]] = set()
    for role, model, options in models_of(spec):
        try:
            endpoint = endpoint_of(model, options)
            probe = spec.check_models and endpoint not in probed
            probed.add(endpoint)
            await check_model(model, options, probe=probe)
        except AssayError as exc:
            raise SpecError(f"{role} {_named(model, str(exc))}") from None
        except HarnessError as exc:
            raise type(exc)(f"{role} {_named(model, str(exc))}") from None


def _named(model: str, message: str) -> str:
    """``message`` starting with the model spec (once)."""
    return message if message.startswith(model) else f"{model}: {message}"
