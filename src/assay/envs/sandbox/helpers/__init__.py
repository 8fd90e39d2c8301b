"""Files run *inside* a sandbox (never imported by assay): the launcher that sets the
limits and reports how the command ended, and the pytest plugin of the ``tests``
grader. Their names are prefixed so they cannot shadow a workspace's own modules."""

from pathlib import Path

HERE = Path(__file__).parent
LAUNCHER = HERE / "_assay_launcher.py"
PYTEST_PLUGIN = HERE / "_assay_pytest_report.py"
