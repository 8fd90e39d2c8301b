"""The retail domain: the offline default and the showcase of assay.

A small online store: users, products, orders, refunds and transfers generated from
a seed (:mod:`.data`), ten atomic tools that enforce data integrity (:mod:`.tools`),
a written policy the agent must follow (``policy.md``), parametric task templates
(:mod:`.templates`), the built-in suite (``suite/``) and three deterministic
reference agents (:mod:`.agents`).
"""

from __future__ import annotations

from pathlib import Path

from ...envs.environment import ToolDomain
from .data import KEYS, REFERENCE_DATE, generate
from .templates import TEMPLATES
from .tools import TOOLKIT

HERE = Path(__file__).parent

#: The policy the agent is given, as markdown.
POLICY: str = (HERE / "policy.md").read_text(encoding="utf-8")

#: Folder of the built-in ``retail`` suite (holds ``suite.yaml``).
SUITE_DIR: Path = HERE / "suite"

VERSION = "1"

DOMAIN = ToolDomain(
    name="retail",
    toolkit=TOOLKIT,
    generate=generate,
    policy=POLICY,
    version=VERSION,
    templates=TEMPLATES,
    memo_reads=True,  # the lookups are pure; transfer_to_human_agent writes (not memoised)
)
"""The retail :class:`~assay.envs.Domain`, registered as ``retail``."""

__all__ = ["DOMAIN", "KEYS", "POLICY", "REFERENCE_DATE", "SUITE_DIR", "TEMPLATES", "TOOLKIT"]
