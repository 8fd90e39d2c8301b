"""``python:mypkg.agents:build``: a factory ``build(ctx)`` returning an agent per trial."""

from assay.agents import AgentContext
from assay.domains.retail.agents import CarefulAgent


def build(ctx: AgentContext) -> CarefulAgent:
    return CarefulAgent(ctx)
