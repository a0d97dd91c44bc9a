/*
 * Flow control, the same everywhere: a producer waits once its consumer
 * holds more than the high mark, and goes on once it is back under half,
 * so a stream does not flap between the two on every write.
 */
#include "daemon.h"

/* Whether queued bytes are past the high mark: the producer must wait. */
bool
flow_full(size_t queued, size_t high)
{
	return queued > high;
}

/* Whether queued bytes are down to half the high mark: it may go on. */
bool
flow_room(size_t queued, size_t high)
{
	return queued <= high / 2;
}
