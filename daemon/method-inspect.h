/*
 * The inspect files' own (method-inspect.c, method-inspect-regs.c): the
 * verbs' shared bound and the registers verb's entry in the inspect table.
 */
#ifndef DBGCTL_METHOD_INSPECT_H
#define DBGCTL_METHOD_INSPECT_H

struct gdb_job;
struct method;
struct request;

/* method-inspect.c */
enum method_return	 method_inspect_run(struct request *, struct gdb_job *);

/* method-inspect-regs.c */
extern const struct method	 method_inspect_regs;

#endif
