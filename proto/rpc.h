/*
 * JSON-RPC 2.0 envelopes: build messages (rpc.c), parse and validate
 * requests (rpc-parse.c), write messages as lines (rpc-dump.c).
 */
#ifndef DBGCTL_RPC_H
#define DBGCTL_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

enum rpc_code {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	RPC_NO_SUCH_SESSION = 1,
	RPC_NOT_RUNNING = 2,
	RPC_SPAWN_FAILED = 3,
	RPC_NOT_READY = 4,
	RPC_TIMEOUT = 5,
	RPC_UNAUTHORIZED = 6,
	RPC_LIMIT = 7,
	RPC_NAME_IN_USE = 8,
	RPC_NOT_SUPPORTED = 9,
	RPC_SHUTTING_DOWN = 10,
	RPC_DEBUGGER_ERROR = 11,
	RPC_BUSY = 12,
	RPC_EOF = 13,
	RPC_EXISTS = 14,
	RPC_IO_ERROR = 15,
	RPC_VERDICT = 16,
	/*
	 * Not an error a reply carries: the line was a response (a result or
	 * an error, no method), which the daemon, which asks clients nothing,
	 * never answers, or a reply that came back to it would loop.
	 */
	RPC_NO_REPLY = 0,
};

/*
 * A validated request; id, method and params point into root, which
 * rpc_parse_free releases. An absent params is added to root as {}.
 */
struct rpc_request {
	json_t		*root;
	json_t		*id;		/* NULL for a notification */
	const char	*method;
	json_t		*params;	/* always an object (empty if absent) */
	char		*id_text;	/* a non-integer id as sent, or NULL */
};

/*
 * Why a line or a parameter was refused. rpc_parse always sets id: on
 * failure it is a new reference to the request's id (json_null() for an
 * explicit null) that the caller must json_decref, or NULL when there is no
 * usable id (parse error, not an object, bad or missing id): reply with null.
 * On success it is NULL. rpc_error_set never touches id.
 */
struct rpc_error {
	int	 code;
	char	 message[512];
	json_t	*id;
};

/* rpc.c */
const char	*rpc_kind(int code);
void	 rpc_error_set(struct rpc_error *, int code, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
json_t	*rpc_request_new(json_t *id, const char *method, json_t *params);
json_t	*rpc_result_new(json_t *id, json_t *result);
json_t	*rpc_error_new(json_t *id, int code, const char *message,
	    json_t *data);
json_t	*rpc_notification_new(const char *method, json_t *params);

/* rpc-parse.c */
/* Whether a request line is a batch: a JSON array, by its first byte. */
bool	 rpc_parse_is_batch(const char *line);
int	 rpc_parse(const char *line, size_t len, struct rpc_request *,
	    struct rpc_error *);
void	 rpc_parse_free(struct rpc_request *);
char	*rpc_parse_id_text(const char *line, size_t len);

/* rpc-dump.c */
char	*rpc_dump(const json_t *msg, size_t *len);
char	*rpc_dump_id(const json_t *msg, const char *id_text, size_t *len);
char	*rpc_dump_result(const json_t *id, const char *id_text,
	    const json_t *result, size_t *len);
char	*rpc_dump_result_text(const json_t *id, const char *id_text,
	    const char *result, size_t rlen, size_t *len);

#endif
