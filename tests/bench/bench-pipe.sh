#!/bin/sh
# Throughput of `dbgctl pipe` to a `cat` target, against a raw pipe chain.
# Prints MiB/s for both and their ratio; not a pass/fail test.
. "$(dirname "$0")/bench-env.sh"
mib=${BENCH_MIB:-256}

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
