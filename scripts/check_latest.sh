#!/bin/sh
# The checks' test suite against the newest release of every dependency, not the locked versions:
# what the next `uv pip compile --upgrade` (README, "Dependencies") would bring, tried before the lock
# moves. Arguments are pip requirements installed over the newest ones, to try one version of a
# package: `sh scripts/check_latest.sh pyyaml==6.0.3`. PYTEST_ARGS is passed to pytest.
# The virtual environment is made anew in $AGENTV_LATEST_VENV (kept), else in a temporary directory
# removed at the end.
set -eu
cd "$(dirname "$0")/.."
if [ -n "${AGENTV_LATEST_VENV:-}" ]; then
    venv="$AGENTV_LATEST_VENV"
else
    venv="$(mktemp -d "${TMPDIR:-/tmp}/agentv-latest.XXXXXX")"
    trap 'rm -rf "$venv"' EXIT
fi
sh scripts/chromium.sh
python3 -m venv --clear "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet --upgrade --upgrade-strategy eager -e '.[dev]'
if [ "$#" -gt 0 ]; then
    "$venv/bin/pip" install --quiet "$@"
fi
echo "scripts/check_latest.sh: installed in $venv; versions that differ from requirements.lock:"
"$venv/bin/python" scripts/lock_diff.py requirements.lock
# AGENTV_UNLOCKED: the test that the installed versions are the locked ones says what differs, and skips.
AGENTV_UNLOCKED=1 "$venv/bin/python" -m pytest ${PYTEST_ARGS:-}
