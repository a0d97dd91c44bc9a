/*
 * The session object's table and the list pages built from it: status.c's
 * members, picked and written as rows by status-page.c for the methods
 * that list sessions.
 */
#ifndef DBGCTL_STATUS_PAGE_H
#define DBGCTL_STATUS_PAGE_H

#include "daemon.h"

#include "jtext.h"

/* status.c: the members of the session object. */
/* One member of the session object: its value, NULL where the session has none. */
struct status_field {
	const char	*name;		/* NULL: the kind's own members */
	json_t		*(*value)(const struct session *);
	bool		 fixed;		/* set at launch for good: rows keep its text */
	/* The value as row text, for members every row has: no tree made. */
	void		(*text)(const struct session *, struct jtext *);
};
extern const struct status_field status_fields[];
extern const size_t status_nfields;
json_t	*status_row_argv(json_t *argv, bool *cut);
pid_t		 status_main_pid(const struct session *);
const char	*status_faulted_what(const struct session *);

/* status-page.c: rows of sessions written as JSON text, as many as fit a reply. */
/* The most rows a list page may have. */
#define LIST_LIMIT_MAX 10000

/* Which members each row carries: every one, or those named. */
struct status_pick {
	bool		 all;
	uint64_t	 mask;		/* status_fields entries named */
	bool		 kind_own;	/* a name none of them has: ask the kind */
	json_t		*names;		/* the names, for the kind's own members */
};
struct status_page {
	struct jtext		 t;	/* {"KEY":[row,row... */
	size_t			 n;
	size_t			 max_rows;
	bool			 full;	/* a row was left out */
	const struct status_pick *pick;
};
void	 status_page_pick(struct status_pick *, json_t *fields);
void	 status_page_init(struct status_page *, const char *key,
	    size_t max_rows, const struct status_pick *);
bool	 status_page_add(struct status_page *, struct session *);
void	 status_page_ahead(const struct session *);
void	 status_page_ahead_more(const struct session *);
char	*status_page_done(struct status_page *, size_t *len);

/* status-table.c: the list as the table dbgctl list prints. */
#define STATUS_TABLE_COLUMNS 8
struct status_table {
	struct jtext	 text;		/* {"table":"the lines, escaped */
	struct jtext	 cmd;		/* a line's command, being joined */
	size_t		 width[STATUS_TABLE_COLUMNS - 1];
	size_t		 cols;		/* the terminal's; 0: lines not cut */
	size_t		 n;
	size_t		 max_rows;
	bool		 full;		/* a line was left out */
	time_t		 now;
};
void	 status_table_init(struct status_table *, size_t cols,
	    size_t max_rows);
void	 status_table_measure(struct status_table *, struct session *);
void	 status_table_header(struct status_table *);
bool	 status_table_add(struct status_table *, struct session *);
void	 status_table_ahead(const struct session *);
char	*status_table_done(struct status_table *, size_t *len);

#endif
