"""Reports: console rendering (rich), the one-file HTML report (``assay.report.html``,
needs the ``report`` extra: import it directly), JUnit XML and Markdown summaries."""

from .console import render_runs, render_summary, render_transcript, render_trials

__all__ = ["render_runs", "render_summary", "render_transcript", "render_trials"]
