"""Reports: console rendering (HTML, JUnit and Markdown come with later issues)."""

from .console import render_runs, render_summary, render_transcript, render_trials

__all__ = ["render_runs", "render_summary", "render_transcript", "render_trials"]
