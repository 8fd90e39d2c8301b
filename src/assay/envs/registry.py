"""Domains by name: built-ins are imported lazily, plugins add theirs; a suite's own
domain is found by its :class:`~assay.envs.local.LocalDomainRef`."""

from __future__ import annotations

from ..core.registry import Registry
from .environment import NO_DOMAIN, Domain
from .local import LocalDomainRef, load_local_domain

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

#: What names a domain: a registered name, a suite's own domain, or None (no domain).
DomainRef = str | LocalDomainRef | None


def get_domain(ref: DomainRef) -> Domain:
    """The domain ``ref`` names: a registered name, a suite's own domain
    (:class:`LocalDomainRef`), or ``None`` (no domain)."""
    if isinstance(ref, LocalDomainRef):
        return load_local_domain(ref).domain
    return DOMAINS.get(ref or "none")
