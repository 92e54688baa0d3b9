#!/bin/sh
# Make Chromium available for the HTML report's browser test (tests/report/test_html_browser.py):
# Debian's package, installed with apt-get when it is missing (as root, or through sudo).
# Playwright drives this browser; it never downloads one of its own.
set -eu
if command -v chromium >/dev/null 2>&1 || [ -n "${AGENTV_CHROMIUM:-}" ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "scripts/chromium.sh: no chromium and no apt-get: install Chromium and set AGENTV_CHROMIUM to it" >&2
    exit 0  # the browser test says so itself (and fails under CI)
fi
as_root=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then as_root="sudo"; else
        echo "scripts/chromium.sh: no chromium, and apt-get needs root: apt-get install chromium" >&2
        exit 0
    fi
fi
echo "scripts/chromium.sh: installing Debian's chromium (for the HTML report's browser test)" >&2
$as_root apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 \
    || { $as_root apt-get update >/dev/null && $as_root apt-get install -y --no-install-recommends chromium >/dev/null; }
