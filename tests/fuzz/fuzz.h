/* What every libFuzzer target of tests/fuzz shares. */
#ifndef DBGCTL_FUZZ_H
#define DBGCTL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
