"""A reader's own package, as docs/agents.md names it (``python:mypkg.agents:build``)."""
