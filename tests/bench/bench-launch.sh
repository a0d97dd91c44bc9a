#!/bin/sh
# gdb launch-to-running through dbgctld against a bare gdb start, in ms.
# Prints the median of several runs of each; not a pass/fail test.
. "$(dirname "$0")/bench-env.sh"
runs=${BENCH_RUNS:-9}
prog=${BENCH_PROGRAM:-/bin/true}
mkfifo "$dir/fifo"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

"$DBGCTL" ping >/dev/null 2>&1 || "$DBGCTL" list >/dev/null
: >"$dir/launch"; : >"$dir/prompt"; : >"$dir/bare"
i=0
while [ $i -lt "$runs" ]; do
	t0=$(now)
	id=$("$DBGCTL" launch -x 'echo READY\n' -- "$prog")
	t1=$(now)
	# Follow the console until gdb has run its first command, as the
	# bare gdb below does before it exits.
	"$DBGCTL" logs -f "$id" >"$dir/fifo" &
	follow=$!
	grep -q -m1 READY <"$dir/fifo" || true
	t2=$(now)
	kill $follow 2>/dev/null || true
	wait $follow 2>/dev/null || true
	"$DBGCTL" stop "$id"
	echo $(((t1 - t0) / 1000000)) >>"$dir/launch"
	echo $(((t2 - t0) / 1000000)) >>"$dir/prompt"
	i=$((i + 1))
done
i=0
while [ $i -lt "$runs" ]; do
	t0=$(now)
	gdb -q -batch -ex 'echo READY\n' "$prog" >/dev/null 2>&1
	t1=$(now)
	echo $(((t1 - t0) / 1000000)) >>"$dir/bare"
	i=$((i + 1))
done
echo "launch: dbgctl launch returns (running): $(median <"$dir/launch") ms"
echo "launch: until gdb ran its first -x command: $(median <"$dir/prompt") ms"
echo "launch: bare gdb -batch, same command, start to exit: $(median <"$dir/bare") ms"
