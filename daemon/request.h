/*
 * A request: its life from a client's line to its one reply, checked against
 * its method, in a batch or waiting, for request.c and the files that answer.
 */
#ifndef DBGCTL_REQUEST_H
#define DBGCTL_REQUEST_H

#include "daemon.h"

/* request.c: requests and the rpc mode. */
struct request_batch;

struct request {
	TAILQ_ENTRY(request)	 entry;		/* while it waits */
	const struct method	*method;
	struct conn		*conn;		/* NULL once the client left */
	json_t			*id;
	char			*id_text;	/* a non-integer id as sent */
	json_t			*params;	/* checked, nulls removed */
	struct session		*session;	/* "session", resolved */
	bool			 waiting;
	bool			 finished;
	bool			 keep_orphan;	/* goes on without its client */
	void			*data;		/* the method's waiting state */
	void			(*free)(struct request *);
	struct sink	       **sinks;		/* sinks it waits on */
	size_t			 nsinks;
	bool			 in_exec;	/* its method is running */
	struct timer		*timer;
	void			(*timeout)(struct request *);
	struct request_batch	*batch;		/* the batch it is in, or NULL */
	size_t			 room;		/* its batch's reply keeps for it */
};

extern const struct conn_mode request_rpc_mode;

enum method_return request_done(struct request *, json_t *result);
enum method_return request_done_text(struct request *, char *, size_t);
enum method_return request_done_head(struct request *, char *, size_t,
		    json_t *extra);
enum method_return request_error(struct request *, int code,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
enum method_return request_error_data(struct request *, int code,
		    json_t *data, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
enum method_return request_fail(struct request *, const struct rpc_error *);
const char	*request_str(struct request *, const char *key,
		    const char *dflt);
long long	 request_int(struct request *, const char *key,
		    long long dflt);
bool		 request_bool(struct request *, const char *key);
json_t		*request_get(struct request *, const char *key);
void		 request_free(struct request *);
/* For request-batch.c: run a member, refuse one, and stand in for a reply. */
void		 request_unpark_all(void);
void		 request_dispatch(struct conn *, struct rpc_request *,
		    struct request_batch *, size_t room);
void		 request_refuse(struct conn *, struct rpc_error *,
		    struct request_batch *, size_t room);
char		*request_limit_line(struct request *, const char *why,
		    size_t *len);

/* request-check.c: a request checked against its method's declaration. */
const struct method *request_check_method(const char *name);
const struct method *request_check_at(size_t);
int		 request_check_param(const struct method_param *, json_t *params,
		    json_t *out, struct rpc_error *);
int		 request_check(struct request *, json_t *params,
		    struct rpc_error *);
/* tests/fuzz: parse and check a line as a connection would, running nothing. */
const struct method *request_check_line(const char *line, size_t len,
		    json_t **params, struct rpc_error *);

/* request-batch.c: a line of requests answered as one array. */
bool		 request_batch_line(struct conn *, const char *line,
		    size_t len);
void		 request_batch_join(struct request_batch *);
void		 request_batch_add(struct request_batch *, struct request *,
		    char *line, size_t len);
void		 request_batch_gone(struct request_batch *, struct request *);
const char	*request_batch_refusal(struct request_batch *);

/* pending.c: requests that wait, each completed once by what it waits on. */
enum method_return pending_wait(struct request *, void *data,
		    void (*free)(struct request *));
void		 pending_sink(struct request *, struct session *,
		    unsigned mask, sink_cb);
void		 pending_timeout(struct request *, uint64_t ms,
		    void (*)(struct request *));
void		 pending_finish(struct request *);
enum method_return pending_park(struct request *, json_t *params);
void		 pending_unpark_all(void (*run)(struct request *, json_t *));
void		 pending_forget_conn(struct conn *);
void		 pending_verdict(struct session *, bool held);
bool		 pending_held(const struct request *);
enum method_return pending_verdict_end(struct request *, json_t *data);

#endif
