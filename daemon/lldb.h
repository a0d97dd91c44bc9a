/* The lldb kinds' own: what lldb's console text is made of, and its state. */
#ifndef DBGCTL_LLDB_H
#define DBGCTL_LLDB_H

#include <stdbool.h>
#include <stddef.h>

struct argv;
struct server;
struct session;

/* lldb's prompt. */
#define LLDB_PROMPT "(lldb) "
#define LLDB_PROMPT_LEN 7

/* What a move to column 1 becomes in text made with lines. */
#define LLDB_COLUMN1 '\001'

/*
 * What a move to the column right after the prompt becomes in text made
 * with lines: editline ends each drawing of its prompt so, after blanks
 * that erase what was there when it redraws it on its own.
 */
#define LLDB_PROMPTCOL '\002'

/* lldb-text.c: lldb's console text, its escapes and its prompt. */
size_t	 lldb_text_clean(char *, size_t, bool lines);
bool	 lldb_text_prompt_end(const char *, size_t);
size_t	 lldb_text_cursor(const char *, size_t);
size_t	 lldb_text_unprompt(const char *, size_t);

/* backend-lldb.c: what the lldb kinds share. */
extern const struct backend backend_lldb;
struct server	*backend_lldb_managed(struct session *);
const struct server *backend_lldb_peek_managed(const struct session *);
void		 backend_lldb_argv_end(struct session *, struct argv *);
void		 backend_lldb_adopted(struct session *);

#endif
