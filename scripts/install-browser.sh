#!/usr/bin/env bash
# Install what the browser tests (tests/browser) need, idempotently:
#   - Debian's chromium (/usr/bin/chromium); Playwright's own browser download is not used
#     (it does not work offline) - the tests launch this binary through executable_path.
#   - the Python side (playwright, fastapi, uvicorn, jinja2, matplotlib) comes from the
#     project's extras: pip install -e '.[test,view]'.
# Usage: scripts/install-browser.sh   (as root, or with sudo available)
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-browser: need root (or sudo) to apt-get install chromium" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends chromium; then
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends chromium
fi
echo "installed: $(chromium --version 2>/dev/null || echo /usr/bin/chromium)"
