"""assay: an evaluation harness for AI agents and LLM applications."""

__version__ = "0.1.0"
