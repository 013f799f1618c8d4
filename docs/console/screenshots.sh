#!/usr/bin/env bash
# Writes the web console's screenshots (docs/console/*.png, shown in the README) by running the
# browser test with SKILLET_CONSOLE_SCREENSHOTS set. Needs Debian chromium + chromium-driver and
# selenium in .venv (mock-llm/tests/python/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
SKILLET_CONSOLE_SCREENSHOTS="$PWD/docs/console" CI=1 \
  cargo test -p skillet --test serve console_browser:: -- --nocapture
