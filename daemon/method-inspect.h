/*
 * The inspect files' own (method-inspect.c, method-inspect-regs.c,
 * method-inspect-live.c, method-break.c): the verbs' shared bound and
 * answer, the registers and break verbs' entries in the inspect table,
 * memory's live way.
 */
#ifndef DBGCTL_METHOD_INSPECT_H
#define DBGCTL_METHOD_INSPECT_H

struct gdb_data;
struct gdb_job;
struct method;
struct request;

/* A verb's bound on its whole work, unless "timeout" says. */
#define METHOD_INSPECT_TIMEOUT	10000

/* method-inspect.c */
enum method_return	 method_inspect_run(struct request *, struct gdb_job *);
json_t			*method_inspect_last(struct gdb_job *);

/* method-inspect-live.c */
enum method_return	 method_inspect_live(struct request *, struct gdb_data *,
			    unsigned char *data, size_t len);

/* method-inspect-regs.c */
extern const struct method	 method_inspect_regs;

/* method-break.c */
extern const struct method	 method_break;

#endif
