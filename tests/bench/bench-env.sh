# Sourced by the benchmarks: a private daemon in a temporary directory,
# shut down and removed on exit, and a nanosecond clock.
set -eu
: "${DBGCTL:?path to dbgctl}" "${DBGCTLD:?path to dbgctld}"
dir=$(mktemp -d)
trap '"$DBGCTL" shutdown >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
export DBGCTL_SOCKET="$dir/sock" XDG_STATE_HOME="$dir/state"
export DBGCTL_DAEMON="$DBGCTLD"

now() { date +%s%N; }
