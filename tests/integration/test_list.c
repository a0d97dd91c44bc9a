/*
 * list's "fields" as a client of the protocol uses it: rows of id and only
 * the members named (the kind's own among them), the limit on how many it
 * names, and list's replies in a batch and under an id spelt as a real.
 * The table of dbgctl list is test_list_table.c's.
 */
#include "harness.h"

#include <sys/stat.h>

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(list, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 120);

/* Call method with params on c; assert a result and return the reply. */
static json_t *
list_call(struct h_conn *c, const char *method, const char *params)
{
	json_t *r = h_conn_call(c, method, params, H_RUN_BOUND);

	cr_assert_not_null(r, "%s %s: no reply", method, params);
	cr_assert_not_null(h_jpath(r, "result"), "%s %s: no result: %s",
	    method, params, json_dumps(r, 0));
	return r;
}

/* Launch a session over c with params; its id (asserted). */
static long
list_launch(struct h_conn *c, const char *params)
{
	json_t	*r = list_call(c, "launch", params);
	long	 id = (long)h_jint(r, "result.id", -1);

	cr_assert_gt(id, 0, "launch %s: no id", params);
	json_decref(r);
	return id;
}

/* The row of id in a list reply's sessions, or NULL. */
static json_t *
list_row_of(json_t *reply, long id)
{
	json_t	*row;
	size_t	 i;

	json_array_foreach(h_jpath(reply, "result.sessions"), i, row)
		if (h_jint(row, "id", -1) == id)
			return row;
	return NULL;
}

/* Assert row has exactly the keys of the NULL-terminated list want. */
static void
list_expect_keys(json_t *row, const char *const want[], const char *when)
{
	size_t	n = 0;
	char	*text = json_dumps(row, JSON_COMPACT);

	for (; want[n] != NULL; n++)
		cr_assert_not_null(json_object_get(row, want[n]), "%s: no %s "
		    "in %s", when, want[n], text);
	cr_assert_eq(json_object_size(row), n, "%s: want %zu keys, got %s",
	    when, n, text);
	free(text);
}

/*
 * fields picks members: every row has id and the members named, none
 * other; a name no session has is absent, the order of names does not
 * matter, and the values are those of whole rows.
 */
Test(list, fields_give_rows_of_id_and_the_members_named)
{
	struct h_conn	 c;
	json_t		*part, *whole, *row;
	long		 id[3];
	char		*a, *b;
	int		 i;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	id[0] = list_launch(&c, "{\"kind\":\"exec\",\"name\":\"picked\","
	    "\"argv\":[\"sleep\",\"100\"]}");
	id[1] = list_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"true\"]}");
	id[2] = list_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"sleep\","
	    "\"100\"]}");
	h_cli_expect_exit(id[1], 0, H_WAIT_BOUND, "true");
	part = list_call(&c, "list", "{\"fields\":[\"name\",\"state\","
	    "\"bogus\"]}");
	whole = list_call(&c, "list", "{}");
	cr_assert_eq(json_array_size(h_jpath(part, "result.sessions")), 3,
	    "rows");
	for (i = 0; i < 3; i++) {
		row = list_row_of(part, id[i]);
		cr_assert_not_null(row, "no row for session %ld", id[i]);
		list_expect_keys(row, H_ARGS("id", "name", "state"), "picked");
		cr_assert(json_equal(json_object_get(row, "name"),
		    json_object_get(list_row_of(whole, id[i]), "name")),
		    "session %ld: name", id[i]);
		cr_assert_str_eq(h_jstr(row, "state"), h_jstr(list_row_of(whole,
		    id[i]), "state"), "session %ld: state", id[i]);
	}
	cr_assert_str_eq(h_jstr(list_row_of(part, id[0]), "name"), "picked");
	cr_assert(json_is_null(json_object_get(list_row_of(part, id[2]),
	    "name")), "no name is null");
	cr_assert_str_eq(h_jstr(list_row_of(part, id[1]), "state"), "exited");
	json_decref(part);
	json_decref(whole);
	part = list_call(&c, "list", "{\"fields\":[\"state\",\"name\"]}");
	whole = list_call(&c, "list", "{\"fields\":[\"name\",\"state\"]}");
	a = json_dumps(h_jpath(part, "result"), JSON_COMPACT);
	b = json_dumps(h_jpath(whole, "result"), JSON_COMPACT);
	cr_assert(strstr(a, "\"state\":") < strstr(a, "\"name\":"), "rows "
	    "not in the session object's order: %s", a);
	cr_assert_str_eq(a, b, "the order of the names changed the rows");
	free(a);
	free(b);
	json_decref(part);
	json_decref(whole);
	part = list_call(&c, "list", "{\"fields\":[]}");
	list_expect_keys(list_row_of(part, id[0]), H_ARGS("id"), "no fields");
	json_decref(part);
	h_conn_close(&c);
}

/* Make a directory below H->dir named name; its path into dir. */
static void
list_odd_dir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "%s/%s", H->dir, name);
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir %s", dir);
}

/* Assert that list's row of session id holds what status says of it. */
static void
list_expect_status(struct h_conn *c, json_t *all, long id)
{
	json_t		*row = list_row_of(all, id), *st, *v;
	const char	*key;
	char		 params[64], *a, *b;

	cr_assert_not_null(row, "no row for session %ld", id);
	snprintf(params, sizeof params, "{\"session\":%ld}", id);
	st = list_call(c, "status", params);
	a = json_dumps(row, JSON_COMPACT | JSON_SORT_KEYS);
	b = json_dumps(h_jpath(st, "result"), JSON_COMPACT | JSON_SORT_KEYS);
	json_object_foreach(h_jpath(st, "result"), key, v)
		cr_assert(json_equal(json_object_get(row, key), v), "session "
		    "%ld: %s differs:\nlist   %s\nstatus %s", id, key, a, b);
	cr_assert_eq(json_object_size(row), json_object_size(h_jpath(st,
	    "result")), "session %ld:\nlist   %s\nstatus %s", id, a, b);
	free(a);
	free(b);
	json_decref(st);
}

/*
 * A row holds what status says of the session, member for member: strings
 * (working directories' names) each with one kind of byte to escape or
 * keep (a quote; a backslash; control bytes; DEL and UTF-8), arguments
 * with all of them, small and large numbers, null. status builds its
 * object as a tree; list writes its rows as text of its own, for most
 * values without jansson.
 */
Test(list, rows_say_what_status_says)
{
	static const char *const odd[] = { "q\"s", "b\\s", "t\tn\ne\x1b",
	    "d\x7f caf\xc3\xa9 \xf0\x9f\x98\x80" };
	struct h_conn	 c;
	json_t		*all, *p, *r;
	char		 dir[512], name[16], *text;
	long		 id[6];
	size_t		 i;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	for (i = 0; i < 4; i++) {
		list_odd_dir(dir, sizeof dir, odd[i]);
		snprintf(name, sizeof name, "odd_%zu.x", i);
		p = json_pack("{s:s, s:s, s:[s,s,s,s,s,s,s], s:s, s:i}", "kind",
		    "exec", "name", name, "argv", "sh", "-c", "sleep 100",
		    odd[0], odd[1], odd[2], odd[3], "cwd", dir, "stop_timeout",
		    0);
		text = json_dumps(p, JSON_COMPACT);
		id[i] = list_launch(&c, text);
		free(text);
		json_decref(p);
	}
	id[4] = list_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"true\"],"
	    "\"stop_timeout\":3600000}");
	r = h_conn_call(&c, "launch", "{\"kind\":\"exec\",\"argv\":["
	    "\"/nonexistent/x\"]}", H_RUN_BOUND);
	id[5] = (long)h_jint(r, "error.data.session", -1);
	cr_assert_gt(id[5], 0, "a failed launch names no session");
	json_decref(r);
	h_cli_expect_exit(id[4], 0, H_WAIT_BOUND, "true");
	h_cli_expect_state(id[5], "failed", "a program that does not exist");
	all = list_call(&c, "list", "{}");
	for (i = 0; i < 6; i++)
		list_expect_status(&c, all, id[i]);
	json_decref(all);
	h_conn_close(&c);
}

/* A gdb session's own member inferior_pid is in the rows that name it. */
Test(list, fields_name_a_kinds_own_member)
{
	struct h_conn	 c;
	json_t		*r, *row;
	long		 gdb, exec;
	pid_t		 inf;
	char		 ids[32];

	h_daemon_fg();
	gdb = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_SPINNER")));
	h_cli_wait_log(h_idstr(gdb, ids, sizeof ids), "spinning",
	    H_WAIT_BOUND);
	cr_assert(h_cli_wait_status(gdb, "inferior_pid", NULL, H_WAIT_BOUND),
	    "status %ld never showed inferior_pid", gdb);
	inf = h_cli_status_pid(gdb, "inferior_pid");
	exec = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "100"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	r = list_call(&c, "list", "{\"fields\":[\"inferior_pid\"]}");
	row = list_row_of(r, gdb);
	list_expect_keys(row, H_ARGS("id", "inferior_pid"), "gdb row");
	cr_assert_eq(h_jint(row, "inferior_pid", -1), inf, "inferior_pid");
	h_pid_expect_comm((pid_t)h_jint(row, "inferior_pid", -1),
	    "inferior_pid", "fix-spinner");
	list_expect_keys(list_row_of(r, exec), H_ARGS("id"), "exec row");
	json_decref(r);
	r = list_call(&c, "list", "{\"fields\":[\"kind\",\"inferior_pid\","
	    "\"pid\"]}");
	row = list_row_of(r, gdb);
	list_expect_keys(row, H_ARGS("id", "kind", "pid", "inferior_pid"),
	    "gdb row with kind and pid");
	cr_assert_str_eq(h_jstr(row, "kind"), "gdb");
	cr_assert_eq(h_jint(row, "pid", -1), h_cli_status_pid(gdb, "pid"),
	    "pid");
	json_decref(r);
	h_conn_close(&c);
}

/* Assert a list with params is refused as invalid params, saying want. */
static void
list_expect_refused(struct h_conn *c, const char *params, const char *want)
{
	json_t *r = h_conn_call(c, "list", params, H_RUN_BOUND);

	cr_assert_not_null(r, "list %.80s: no reply", params);
	cr_assert_eq(h_jint(r, "error.code", 0), -32602, "list %.80s: %s",
	    params, json_dumps(r, 0));
	cr_assert_not_null(strstr(h_jstr(r, "error.message"), want), "list "
	    "%.80s: message %s", params, h_jstr(r, "error.message"));
	json_decref(r);
}

/* params {"fields":[n names]}, malloc'd. */
static char *
list_fields_params(int n)
{
	char	*s = malloc(32 + (size_t)n * 8), *p;
	int	 i;

	p = stpcpy(s, "{\"fields\":[");
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s\"f%d\"", i > 0 ? "," : "", i);
	strcpy(p, "]}");
	return s;
}

/* 64 names at most, and only an array of strings; the daemon goes on. */
Test(list, fields_are_limited_and_typed)
{
	struct h_conn	 c;
	json_t		*r;
	char		*p;

	h_daemon_fg();
	h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "100"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	p = list_fields_params(65);
	list_expect_refused(&c, p, "at most 64");
	free(p);
	p = list_fields_params(64);
	r = list_call(&c, "list", p);
	list_expect_keys(json_array_get(h_jpath(r, "result.sessions"), 0),
	    H_ARGS("id"), "64 unknown names");
	json_decref(r);
	free(p);
	list_expect_refused(&c, "{\"fields\":\"name\"}", "array of strings");
	list_expect_refused(&c, "{\"fields\":[1]}", "array of strings");
	list_expect_refused(&c, "{\"fields\":[\"name\",null]}",
	    "array of strings");
	list_expect_refused(&c, "{\"fields\":{\"name\":\"x\"}}",
	    "array of strings");
	r = list_call(&c, "ping", "{}");
	cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping");
	json_decref(r);
	h_conn_close(&c);
	cr_assert(h_daemon_ping(), "the daemon no longer answers");
}


/* Send one line on c and read the reply line (asserted). */
static char *
list_exchange(struct h_conn *c, const char *line)
{
	char *reply;

	cr_assert_eq(h_conn_send(c, line, strlen(line), H_RUN_BOUND), 0,
	    "send %s", line);
	reply = h_conn_line(c, H_RUN_BOUND);
	cr_assert_not_null(reply, "no reply to %s", line);
	return reply;
}

/*
 * In a batch, list with fields and ping each get their reply; alone, a
 * list whose id is spelt 1e3 is answered under 1e3 as spelt.
 */
Test(list, batch_replies_and_an_id_spelt_as_sent)
{
	static const char batch[] = "[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"list\",\"params\":{\"fields\":[\"state\"]}},{\"jsonrpc\":\"2.0\","
	    "\"id\":8,\"method\":\"ping\"}]\n";
	static const char real[] = "{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":"
	    "\"list\",\"params\":{\"fields\":[\"kind\"]}}\n";
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":1e3,\"result\":";
	struct h_conn	 c;
	json_t		*r, *e, *list = NULL, *ping = NULL;
	long		 id;
	size_t		 i;
	char		*line;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "100"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	line = list_exchange(&c, batch);
	r = json_loads(line, 0, NULL);
	cr_assert(json_is_array(r) && json_array_size(r) == 2, "batch reply: "
	    "%s", line);
	json_array_foreach(r, i, e) {
		if (h_jint(e, "id", -1) == 7)
			list = e;
		else if (h_jint(e, "id", -1) == 8)
			ping = e;
	}
	cr_assert_not_null(list, "no reply to the list: %s", line);
	cr_assert_not_null(ping, "no reply to the ping: %s", line);
	cr_assert(json_is_true(h_jpath(ping, "result.pong")), "ping: %s",
	    line);
	cr_assert_eq(h_jint(list, "result.total", -1), 1, "total: %s", line);
	e = json_array_get(h_jpath(list, "result.sessions"), 0);
	list_expect_keys(e, H_ARGS("id", "state"), "the batch's list row");
	cr_assert_eq(h_jint(e, "id", -1), id, "the row's id");
	cr_assert_str_eq(h_jstr(e, "state"), "running", "the row's state");
	json_decref(r);
	free(line);
	line = list_exchange(&c, real);
	cr_assert(strncmp(line, head, strlen(head)) == 0, "the reply is not "
	    "under the id as spelt: %s", line);
	r = json_loads(line, 0, NULL);
	cr_assert_not_null(r, "not JSON: %s", line);
	list_expect_keys(json_array_get(h_jpath(r, "result.sessions"), 0),
	    H_ARGS("id", "kind"), "the row under 1e3");
	json_decref(r);
	free(line);
	h_conn_close(&c);
}
