/*
 * A method's declaration: its params, flags and exec, for the method files,
 * request.c and request-check.c, and the kinds' tables of launch params.
 */
#ifndef DBGCTL_METHOD_H
#define DBGCTL_METHOD_H

#include "daemon.h"

/* request-check.c checks a request against these before exec runs. */
/* JSON types a param may have (bits). */
#define PT_STRING	0x01
#define PT_INT		0x02
#define PT_BOOL		0x04
#define PT_STRINGS	0x08	/* an array of strings */
#define PT_OBJECT	0x10	/* an object of strings */
#define PT_SESSION	0x20	/* an id, a numeric string or a name */
#define PT_SESSIONS	0x40	/* an array of those */

struct method_param {
	const char	*name;
	int		 types;
	bool		 required;
	long long	 min;		/* PT_INT: bounds, when min < max */
	long long	 max;
};

#define METHOD_WHILE_SHUTDOWN	0x1	/* served while shutting down */
#define METHOD_NOAUTH		0x2	/* served before authentication */
#define METHOD_ALONE		0x4	/* the only request in flight */
#define METHOD_VERDICT_ENDS	0x8	/* its wait ends at its session's verdict */
#define METHOD_HOLD_ENDS	0x10	/* ... at a verdict that holds the session */
#define METHOD_WHILE_ADOPTING	0x20	/* served before the adoption is done */

struct method {
	const char			*name;
	const struct method_param	*params;	/* ends with NULL name */
	int				 flags;
	enum method_return		(*exec)(struct request *);
	/* Params beyond the table (launch: its kind's), checked into out. */
	int				(*check)(json_t *params, json_t *out,
					    struct rpc_error *);
	/* What a wait ended before its outcome says (expect: what came). */
	json_t				*(*waited)(struct request *);
};

/* method-*.c: the tables of methods, for request-check.c to look up. */
extern const struct method *const method_session[];
extern const struct method *const method_stream[];
extern const struct method *const method_expects[];
extern const struct method *const method_targets[];
extern const struct method *const method_inspects[];
extern const struct method *const method_resets[];
extern const struct method *const method_daemon[];
extern const struct method *const method_ended[];
extern const struct method *const method_leases[];
extern const struct method *const method_watches[];
extern const struct method *const method_joins[];
extern const struct method *const method_deadlines[];
extern const struct method *const method_holds[];
extern const struct method *const method_bundles[];

/* method-expect.c: a named cursor an adopted session had. */
void	method_expect_restore(struct session *, const char *stream,
	    const char *name, uint64_t);
extern const struct method *const method_rtts[];

#endif
