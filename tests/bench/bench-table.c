/*
 * The table: one row a figure, dbgctl's median beside its baseline's, the
 * ratio and the target, with a mark where the target is missed. Rows are
 * kept and printed at the end, so that the progress lines on stderr and
 * the table on stdout never mix.
 */
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most rows a run prints. */
#define TABLE_MAX 128

/* One row of the table. */
struct table_row {
	char		 name[96];
	char		 unit[8];
	double		 val, base;
	struct target	 target;
	char		 note[96];
	int		 head;	/* a line of text, not a figure */
};

static struct table_row	table_rows[TABLE_MAX];
static int		table_n;

/* The next free row, or NULL once the table is full. */
static struct table_row *
table_next(void)
{
	if (table_n == TABLE_MAX)
		return NULL;
	return memset(&table_rows[table_n++], 0, sizeof table_rows[0]);
}

/* A new row named by fmt and ap, with target t; NULL once the table is full. */
static struct table_row *
table_named(struct target t, const char *fmt, va_list ap)
{
	struct table_row *r;

	if ((r = table_next()) == NULL)
		return NULL;
	vsnprintf(r->name, sizeof r->name, fmt, ap);
	r->target = t;
	return r;
}

/* Add a figure: dbgctl's value and the baseline's, NA where there is none. */
void
table_row(const char *unit, double val, double base, struct target t,
    const char *note, const char *fmt, ...)
{
	struct table_row	*r;
	va_list			 ap;

	va_start(ap, fmt);
	r = table_named(t, fmt, ap);
	va_end(ap);
	if (r == NULL)
		return;
	snprintf(r->unit, sizeof r->unit, "%s", unit);
	snprintf(r->note, sizeof r->note, "%s", note != NULL ? note : "");
	r->val = val;
	r->base = base;
	/* A figure of its own has NA (-inf) for its baseline. */
	if (isinf(base))
		fprintf(stderr, "bench: %s: %g %s\n", r->name, val, unit);
	else
		fprintf(stderr, "bench: %s: %g %s (baseline %g)\n", r->name,
		    val, unit, base);
}

/* Add a figure that could not be measured, and why. */
void
table_na(struct target t, const char *why, const char *fmt, ...)
{
	struct table_row	*r;
	va_list			 ap;

	va_start(ap, fmt);
	r = table_named(t, fmt, ap);
	va_end(ap);
	if (r == NULL)
		return;
	snprintf(r->note, sizeof r->note, "n/a: %s", why);
	r->val = r->base = NA;
	fprintf(stderr, "bench: %s: %s\n", r->name, r->note);
}

/* Add a line of text above the figures, such as the machine line. */
void
table_head(const char *fmt, ...)
{
	struct table_row	*r;
	va_list			 ap;

	if ((r = table_next()) == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(r->name, sizeof r->name, fmt, ap);
	va_end(ap);
	r->head = 1;
}

/* A value with its unit, in about four significant digits; n/a if none. */
static void
table_value(char *buf, size_t len, double v, const char *unit)
{
	const char *sp = unit[0] != '\0' ? " " : "";

	if (!isfinite(v))
		snprintf(buf, len, "n/a");
	else if (fabs(v) < 10 && v != floor(v))
		snprintf(buf, len, "%.3f%s%s", v, sp, unit);
	else if (fabs(v) < 100 && v != floor(v))
		snprintf(buf, len, "%.2f%s%s", v, sp, unit);
	else if (fabs(v) < 1000 && v != floor(v))
		snprintf(buf, len, "%.1f%s%s", v, sp, unit);
	else
		snprintf(buf, len, "%.0f%s%s", v, sp, unit);
}

/* The target as text, in the row's unit. */
static void
table_target(char *buf, size_t len, const struct table_row *r)
{
	double v = r->target.v;

	switch (r->target.kind) {
	case TARGET_NONE:
		snprintf(buf, len, "-");
		break;
	case TARGET_RATIO_MAX:
		snprintf(buf, len, "<= %gx", v);
		break;
	case TARGET_RATIO_MIN:
		snprintf(buf, len, ">= %gx", v);
		break;
	case TARGET_MAX:
		snprintf(buf, len, "<= %g %s", v, r->unit);
		break;
	case TARGET_OVER_MAX:
		snprintf(buf, len, "<= base+%g %s", v, r->unit);
		break;
	case TARGET_ZERO:
		snprintf(buf, len, "= 0");
		break;
	case TARGET_RATIO_PLUS_MAX:
		snprintf(buf, len, "<= %gx+%g %s", v, r->target.w, r->unit);
		break;
	}
}

/* Whether the row meets its target: 1 yes, 0 no, -1 no target or no figure. */
static int
table_met(const struct table_row *r)
{
	double v = r->target.v, ratio = r->val / r->base;
	int base_ok = isfinite(r->base) && r->base > 0;

	if (!isfinite(r->val))
		return -1;
	switch (r->target.kind) {
	case TARGET_NONE:
		return -1;
	case TARGET_RATIO_MAX:
		return base_ok ? ratio <= v : -1;
	case TARGET_RATIO_MIN:
		return base_ok ? ratio >= v : -1;
	case TARGET_MAX:
		return r->val <= v;
	case TARGET_OVER_MAX:
		return isfinite(r->base) ? r->val - r->base <= v : -1;
	case TARGET_ZERO:
		return r->val == 0;
	case TARGET_RATIO_PLUS_MAX:
		return isfinite(r->base) ? r->val <= v * r->base +
		    r->target.w : -1;
	}
	return -1;
}

/* Print one figure's row. */
static void
table_print_row(const struct table_row *r)
{
	char	val[32], base[32], ratio[16], target[32];
	int	met = table_met(r);

	table_value(val, sizeof val, r->val, r->unit);
	table_value(base, sizeof base, r->base, r->unit);
	/* No baseline is a dash, one that could not be had is n/a. */
	if (!isfinite(r->base) && strstr(r->note, "n/a") == NULL)
		snprintf(base, sizeof base, "-");
	if (isfinite(r->val) && isfinite(r->base) && r->base > 0)
		snprintf(ratio, sizeof ratio, "%.2fx", r->val / r->base);
	else
		snprintf(ratio, sizeof ratio, "-");
	table_target(target, sizeof target, r);
	printf("%-60s %14s %14s %7s %-16s %-4s %s\n", r->name, val, base, ratio,
	    target, met == 0 ? "MISS" : met == 1 ? "ok" : "", r->note);
}

/* Print the table, head lines first, then every figure in order. */
void
table_print(void)
{
	int i, heads = 1;

	for (i = 0; i < table_n; i++) {
		if (table_rows[i].head) {
			printf("%s\n", table_rows[i].name);
			continue;
		}
		if (heads) {
			printf("%-60s %14s %14s %7s %-16s %-4s %s\n", "figure",
			    "dbgctl", "baseline", "ratio", "target", "mark",
			    "notes");
			heads = 0;
		}
		table_print_row(&table_rows[i]);
	}
	fflush(stdout);
}
