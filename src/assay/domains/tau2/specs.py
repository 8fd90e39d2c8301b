"""What makes each ported tau2 domain: its database layouts, toolkits, policy and
synchronisation hook. Domain modules are imported only when first asked for."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .store import DbSpec, Tau2DataError
from .toolkit import Tau2Context, Tau2Toolkit

DB_FILES = ("db.json", "db.toml", "db.yaml", "db.yml")
USER_DB_FILES = ("user_db.json", "user_db.toml", "user_db.yaml", "user_db.yml")


@dataclass(frozen=True)
class DomainSpec:
    """One tau2 domain as assay runs it."""

    name: str
    db: DbSpec
    tools: Tau2Toolkit
    policy: Callable[[Path], str]
    user_db: DbSpec | None = None
    user_tools: Tau2Toolkit | None = None
    sync: Callable[[Tau2Context], None] | None = None
    """tau2's ``Environment.sync_tools``: run after every successful tool call."""
    shared_db: bool = False
    """The user's toolkit works on the agent's database (banking): ``user_data`` updates it."""
    data_dirs: tuple[str, ...] = ()
    """Folders of the domain folder that are part of its data (banking: the knowledge
    base's ``documents`` and the ``prompts`` the policy is made of): in the fingerprint,
    copied by the importer."""
    options: Callable[[Sequence[tuple[str, Mapping[str, Any]]]], dict[str, Any]] | None = None
    """Environment options a task's gold actions ``(name, arguments)`` imply (banking: the
    discoverable read tools whose calls are logged, tau2's ``read_log_allowlist``)."""

    @property
    def keys(self) -> dict[str, str]:
        keys = self.db.keys()
        if self.user_db is not None:
            keys.update(self.user_db.keys())
        return keys


def _airline() -> DomainSpec:
    from . import airline, airline_write  # noqa: F401 (registers the write tools)

    return DomainSpec("airline", airline.DB_SPEC, airline.AIRLINE, airline.policy)


def _retail() -> DomainSpec:
    from . import retail, retail_write  # noqa: F401 (registers the write tools)

    return DomainSpec("retail", retail.DB_SPEC, retail.RETAIL, retail.policy)


def _telecom() -> DomainSpec:
    from . import (  # noqa: F401 (register)
        telecom,
        telecom_assertions,
        telecom_phone,
        telecom_phone_setup,
        telecom_user,
        telecom_write,
    )

    return DomainSpec(
        "telecom",
        telecom.DB_SPEC,
        telecom.TELECOM,
        telecom.policy,
        user_db=telecom_phone.USER_DB_SPEC,
        user_tools=telecom_phone.TELECOM_USER,
        sync=telecom.sync,
    )


def _banking() -> DomainSpec:
    from . import (  # noqa: F401 (register the discoverable tools)
        banking,
        banking_accounts,
        banking_activation,
        banking_cards,
        banking_corrections,
        banking_credit,
        banking_credit_payments,
        banking_debit,
        banking_debit_disputes,
        banking_discovery,
        banking_disputes,
        banking_limits,
        banking_user,
        banking_user_actions,
    )

    return DomainSpec(
        "banking_knowledge",
        banking.DB_SPEC,
        banking.KNOWLEDGE,
        banking.policy,
        user_tools=banking_user.KNOWLEDGE_USER,
        shared_db=True,
        data_dirs=("documents", "prompts"),
        options=banking.environment_options,
    )


def _mock() -> DomainSpec:
    from . import mock

    return DomainSpec(
        "mock", mock.DB_SPEC, mock.MOCK, mock.policy, user_db=mock.USER_DB_SPEC, user_tools=mock.MOCK_USER
    )


_FACTORIES: dict[str, Callable[[], DomainSpec]] = {
    "airline": _airline,
    "retail": _retail,
    "telecom": _telecom,
    "mock": _mock,
    "banking_knowledge": _banking,
}
_SPECS: dict[str, DomainSpec] = {}

#: The tau2 domains assay has ported.
DOMAINS: tuple[str, ...] = tuple(_FACTORIES)


def domain_spec(name: str) -> DomainSpec:
    """The spec of a ported domain (``telecom-workflow`` is telecom with tau2's
    workflow policy, chosen by the loader)."""
    base = name.removesuffix("-workflow") if name == "telecom-workflow" else name
    factory = _FACTORIES.get(base)
    if factory is None:
        raise Tau2DataError(f"tau2 domain {name!r} is not ported; ported domains: {', '.join(DOMAINS)}")
    if base not in _SPECS:
        _SPECS[base] = factory()
    return _SPECS[base]


__all__ = ["DB_FILES", "DOMAINS", "USER_DB_FILES", "DomainSpec", "domain_spec"]
