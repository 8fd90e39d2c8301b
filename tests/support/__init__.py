"""Reusable test support: the fake LLM server (``tests.support.fake_llm_server``)."""
