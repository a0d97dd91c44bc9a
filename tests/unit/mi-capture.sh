#!/bin/sh
# Capture the gdb/MI transcript in mi-gdb13.txt (below its two header lines).
# Run in a scratch dir: builds small targets, runs gdb --interpreter=mi3 (and
# mi2 once) on them, and prints what gdb wrote; "# ..." names each session.
set -eu
cat > prog.c <<'C'
#include <pthread.h>
#include <stdio.h>
static int counter;
static void *worker(void *arg) { counter += (int)(long)arg; return NULL; }
int add(int a, int b) { return a + b; }
int main(void) {
	pthread_t t1, t2;
	int x = add(2, 3);
	pthread_create(&t1, NULL, worker, (void *)1L);
	pthread_create(&t2, NULL, worker, (void *)2L);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("x=%d\n", x + counter);
	return 0;
}
C
cat > crash.c <<'C'
#include <stdio.h>
struct node { int v; struct node *next; };
int crash_here(struct node *n) { return n->next->v; }
int main(void) { struct node a = {1, NULL}; printf("start\n"); return crash_here(&a); }
C
cat > multi.c <<'C'
#include <stdio.h>
static inline __attribute__((always_inline)) int twice(int v) { return v * 2; }
int main(void) { int a = twice(1); int b = twice(a); printf("%d\n", b); return 0; }
C
bad=$(printf 'f\377o.c')
printf 'int main(void) { return 0; }\n' > "$bad"
gcc -g -O0 -pthread -o prog prog.c
gcc -g -O0 -o crash crash.c
gcc -g -O0 -o multi multi.c
gcc -g -O0 -o badname "$bad"
gcc -g -O0 -no-pie -static -pthread -o sprog prog.c

# session TITLE MI PROG CMD...: one gdb run, a command every half second.
session() {
	title=$1 mi=$2 prog=$3
	shift 3
	echo "# $title"
	for c in "$@"; do echo "$c"; sleep 0.5; done |
	    timeout 60 gdb --interpreter="$mi" -nx -q "./$prog" 2>/dev/null
}

session "mi3: breakpoints, a run, frames, registers, memory, threads, exit" \
    mi3 prog '0-exec-arguments >/dev/null' '1-break-insert main' \
    '2-break-insert add' '3-break-insert worker' '4-exec-run' \
    '5-stack-list-frames' '6-exec-continue' '7-stack-list-frames' \
    '8-stack-list-arguments 1' '9-data-list-register-names' \
    '10-data-list-register-values x 0 1 2 3' \
    '11-interpreter-exec console "info frame"' \
    '12-data-read-memory-bytes &counter 8' '13-no-such-command' \
    '14-exec-continue' '15-thread-info' '16-break-list' '17-exec-continue' \
    '18-exec-continue' '19-exec-continue' '20-gdb-exit'
session "mi3: SIGSEGV in crash_here, thread ids, console escapes" \
    mi3 crash '21-exec-arguments >/dev/null' '22-exec-run' \
    '23-stack-list-frames' '24-stack-info-frame' '25-thread-list-ids' \
    '26-interpreter-exec console "echo \\003\\033\\377tab\\there\\n"' \
    '27-gdb-exit'
session "mi3: a breakpoint with two locations" \
    mi3 multi '31-break-insert twice' '32-break-list' '33-gdb-exit'
session "mi2: the same, as mi2 writes it (bare tuples after bkpt=)" \
    mi2 multi '41-break-insert twice' '42-break-list' '43-gdb-exit'
session "mi3: three threads, thread-ids with a repeated key" \
    mi3 prog '51-exec-arguments >/dev/null' '52-break-insert worker' \
    '53-exec-run' '54-thread-list-ids' '55-gdb-exit'
session "mi3: a file name that is not UTF-8" \
    mi3 badname '61-break-insert main' '62-gdb-exit'

gdbserver --once 127.0.0.1:0 ./sprog >gdbserver.out 2>&1 &
sleep 1
port=$(sed -n 's/.*Listening on port \([0-9]*\).*/\1/p' gdbserver.out)
session "mi3: gdbserver: connected, monitor output, download status" \
    mi3 sprog "71-target-select remote 127.0.0.1:$port" \
    '72-interpreter-exec console "monitor help"' '73-target-download' \
    '74-gdb-exit'
wait
