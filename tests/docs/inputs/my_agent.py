"""A reader's own agent, as docs/ci.md names it (``python:my_agent:make_agent``): a factory
making a fresh agent per trial, here the careful retail reference agent."""

from assay.agents import AgentContext
from assay.domains.retail.agents import CarefulAgent


def make_agent(ctx: AgentContext) -> CarefulAgent:
    return CarefulAgent(ctx)
