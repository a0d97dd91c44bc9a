#!/bin/sh
# Throughput of `dbgctl pipe` to a `cat` target, against a raw pipe chain.
# Prints MiB/s for both and their ratio; not a pass/fail test.
set -eu
: "${DBGCTL:?path to dbgctl}" "${DBGCTLD:?path to dbgctld}"
mib=${BENCH_MIB:-256}
dir=$(mktemp -d)
trap '"$DBGCTL" shutdown >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
export DBGCTL_SOCKET="$dir/sock" XDG_STATE_HOME="$dir/state"
export DBGCTL_DAEMON="$DBGCTLD"

now() { date +%s%N; }
rate() { echo "$mib $1" | awk '{ printf "%.0f", $1 / ($2 / 1e9) }'; }

id=$("$DBGCTL" launch --kind exec --transport -- cat)
t0=$(now)
head -c "${mib}M" /dev/zero | "$DBGCTL" pipe "$id" | cat >/dev/null
t1=$(now)
head -c "${mib}M" /dev/zero | cat | cat | cat >/dev/null
t2=$(now)
via=$(rate $((t1 - t0)))
raw=$(rate $((t2 - t1)))
echo "pipe: $mib MiB through dbgctl pipe (cat target): $via MiB/s"
echo "pipe: $mib MiB through a raw chain of three cats: $raw MiB/s"
echo "$via $raw" | awk '{ printf "pipe: ratio dbgctl/raw = %.2f\n", $1 / $2 }'
