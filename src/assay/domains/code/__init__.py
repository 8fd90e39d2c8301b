"""The code domain: coding tasks in a sandboxed workspace.

A task's state is a workspace of files (``initial_state.records.files``, or a folder of
the suite through the ``workspace`` template); the agent lists, reads and writes files,
runs commands and runs the tests, every tool inside a bubblewrap sandbox
(:mod:`assay.envs.sandbox`); the ``tests`` grader runs FAIL_TO_PASS / PASS_TO_PASS tests
against the final workspace. Also here: the HumanEval importer (:mod:`.humaneval`) and
the built-in code agents (:mod:`.agents`). See ``docs/code.md``.
"""

from __future__ import annotations

from .environment import CodeDomain, CodeEnvironment
from .templates import TEMPLATES
from .tools import TOOLKIT

VERSION = "1"

POLICY = """\
You are a software engineer working on a repository, in a sandbox. The repository is
your workspace (the current folder of every command). Use the tools to list, read and
write files, run shell commands and run the tests; there is no network. Make the change
the user asks for, run the tests to check it, then reply with a short summary of what
you changed.
"""

DOMAIN = CodeDomain(name="code", toolkit=TOOLKIT, policy=POLICY, version=VERSION, templates=TEMPLATES)
"""The code :class:`~assay.envs.Domain`, registered as ``code``."""

__all__ = ["DOMAIN", "POLICY", "TEMPLATES", "TOOLKIT", "CodeDomain", "CodeEnvironment"]
