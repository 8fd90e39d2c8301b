#!/usr/bin/env bash
# Install the Arize Phoenix server the trace tests export to (tests/traces/test_phoenix.py),
# idempotently, into its own virtual environment: arize-phoenix pins anthropic<2, which
# must not change assay's own environment. Prints the `phoenix` executable to use
# (export it as ASSAY_PHOENIX; tests/support/phoenix.py also finds .phoenix-venv itself).
# Usage: scripts/install-phoenix.sh [VENV_DIR]   (default: .phoenix-venv in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.phoenix-venv}"
VERSION="${ASSAY_PHOENIX_VERSION:-20.26.1}"

if [ -x "$VENV/bin/phoenix" ] && "$VENV/bin/python" -c "import phoenix" >/dev/null 2>&1; then
  case "$VENV" in /*) echo "$VENV/bin/phoenix" ;; *) echo "$PWD/$VENV/bin/phoenix" ;; esac
  exit 0
fi
python3 -m venv "$VENV" >&2
"$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
"$VENV/bin/pip" install --quiet "arize-phoenix==$VERSION" >&2
case "$VENV" in
  /*) echo "$VENV/bin/phoenix" ;;
  *) echo "$PWD/$VENV/bin/phoenix" ;;
esac
