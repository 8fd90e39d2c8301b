"""Domains by name: built-ins are imported lazily, plugins add theirs."""

from __future__ import annotations

from ..core.registry import Registry
from .environment import NO_DOMAIN, Domain

DOMAINS: Registry[Domain] = Registry(
    "domain",
    "DOMAINS",
    {
        "retail": "assay.domains.retail:DOMAIN",
        "code": "assay.domains.code:DOMAIN",
        "tau2-banking-kb": "assay.domains.tau2.banking_knowledge:DOMAIN",
        "none": NO_DOMAIN,
    },
)


def get_domain(name: str | None) -> Domain:
    """The domain called ``name`` (``None`` means no domain)."""
    return DOMAINS.get(name or "none")
