"""Parametric templates of the retail suite, collected by name.

Each template makes its own user and orders (dates relative to the task's as-of
date, names, ids and amounts from the task's seeded generator, never colliding with
the generated world) and returns the user scenario, graders and reference actions.
"""

from __future__ import annotations

from ....suites.templates import TemplateFn, collect_templates
from . import orders, refunds, traps

TEMPLATES: dict[str, TemplateFn] = {
    **collect_templates(refunds),
    **collect_templates(orders),
    **collect_templates(traps),
}
"""Template name -> template function."""

__all__ = ["TEMPLATES"]
