# Sourced by the SimGrid model tests: strict mode, the repository root as the working
# directory, a scratch directory removed on exit ($TMP) and a failure counter (fail MSG).
# $1: the scratch directory's name.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
TMP=$(mktemp -d "/tmp/$1.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
