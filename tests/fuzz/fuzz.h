/* What every libFuzzer target of tests/fuzz shares. */
#ifndef DBGCTL_FUZZ_H
#define DBGCTL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frame.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant broke: say which and where, and crash (libFuzzer keeps it). */
#define fuzz_check(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: invariant \"%s\" broken: ",	\
		    __FILE__, __LINE__, #cond);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

/* Cut the input into lines as the daemon's framers do, cb on each. */
static inline void
fuzz_lines(const uint8_t *data, size_t size, frame_line_cb cb)
{
	struct frame f;

	frame_init(&f, FRAME_MAX);
	frame_feed(&f, (const char *)data, size, cb, NULL);
	frame_free(&f);
}

#endif
