"""Take the screenshot of docs/traces.md: a retail run (LLM agent and user behind the
fake endpoint of the tests) exported to a real Arize Phoenix, shown in Phoenix's UI in
headless Chromium (Debian's /usr/bin/chromium through Playwright).

Usage: python scripts/phoenix_screenshot.py [OUT_DIR]   (default docs/)
Needs the Phoenix server (scripts/install-phoenix.sh) and Chromium (scripts/install-browser.sh).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import CHROMIUM, FLAGS  # noqa: E402
from tests.support.cli import assay_main  # noqa: E402
from tests.support.fake_llm_server import FakeLLMServer  # noqa: E402
from tests.support.phoenix import PhoenixServer  # noqa: E402
from tests.support.scripted_brain import brain  # noqa: E402
from tests.traces.conftest import llm_run  # noqa: E402

PROJECT = "assay-retail"


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeLLMServer(brain) as srv,
        PhoenixServer(Path(tmp) / "px") as px,
    ):
        run = llm_run(srv, Path(tmp), task_ids=["refund-in-window-email", "cancel-pending"])
        done = assay_main(
            "export-traces",
            run.run_id,
            "--otel-endpoint",
            px.url,
            "--project",
            PROJECT,
            "--store",
            str(Path(tmp) / "assay.db"),
        )
        assert done.code == 0, done.stderr
        px.spans(PROJECT, 100)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{px.url}/projects", wait_until="load")
            page.get_by_text(PROJECT, exact=True).first.click()
            time.sleep(8)
            page.screenshot(path=str(out_dir / "traces-phoenix-project.png"))
            page.get_by_text("trial ", exact=False).first.click()
            time.sleep(8)
            page.screenshot(path=str(out_dir / "traces-phoenix-trace.png"))
            browser.close()
    print(f"wrote {out_dir / 'traces-phoenix-project.png'} and {out_dir / 'traces-phoenix-trace.png'}")


if __name__ == "__main__":
    main()
