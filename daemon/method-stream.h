/*
 * The stream files' own (method-stream.c, method-write.c): which stream a
 * request names, and write's entry in the stream table.
 */
#ifndef DBGCTL_METHOD_STREAM_H
#define DBGCTL_METHOD_STREAM_H

#include <stdbool.h>

struct method;
struct request;
struct transport;

/* method-stream.c */
struct transport	*method_stream_transport(struct request *);
bool			 method_stream_console(struct request *);
bool			 method_stream_ok(struct request *);

/* method-write.c */
extern const struct method	 method_write;

#endif
