/*
 * Resource limits that degrade cleanly: the daemon raises its soft fd
 * limit to the hard one (programs keep the one it was started with), a
 * client past the descriptors it keeps in reserve is told why rather than
 * reset, and unfinished request lines have a budget across connections.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(limits, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 120);

/* The soft limit a process runs with, from /proc/PID/limits. */
static long
soft_nofile(pid_t pid)
{
	char	 path[64], *text, *p;
	long	 soft = -1;

	snprintf(path, sizeof path, "/proc/%ld/limits", (long)pid);
	text = h_read_file(path, NULL);
	cr_assert_not_null(text, "read %s", path);
	if ((p = strstr(text, "Max open files")) != NULL)
		soft = strtol(p + strlen("Max open files"), NULL, 10);
	free(text);
	return soft;
}

/* Start the daemon with soft and hard fd limits of its own. */
static pid_t
daemon_with_nofile(rlim_t soft, rlim_t hard)
{
	pid_t pid;

	/* The daemon inherits these; this test process keeps the hard one. */
	h_daemon_nofile(soft, hard);
	pid = h_daemon_fg();
	h_daemon_nofile_back();
	return pid;
}

/*
 * Started at a soft limit of 150, the daemon runs at the hard limit, and
 * a program it starts gets 150 back.
 */
Test(limits, the_soft_fd_limit_is_raised_for_the_daemon_only)
{
	pid_t	 daemon = daemon_with_nofile(150, 400);
	long	 id;
	char	 ids[32], *log;

	cr_assert_eq(soft_nofile(daemon), 400, "the daemon's soft limit");
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sh", "-c",
	    "echo limit=$(ulimit -Sn)"));
	h_cli_expect_exit(id, 0, 10000, "ulimit");
	log = h_cli_logs(h_idstr(id, ids, sizeof ids));
	cr_assert_not_null(strstr(log, "limit=150"), "the program's limit: %s",
	    log);
	free(log);
}

/*
 * Clients past the reserve get one error line that says why and are
 * closed; the daemon logs it and serves a new client once others leave.
 */
Test(limits, clients_past_the_fd_reserve_are_told_why)
{
	enum { N = 380 };
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}\n";
	struct h_conn	*c = calloc(N, sizeof *c);
	char		*line, *log, path[PATH_MAX];
	int		 i, opened = 0, refused = 0;

	daemon_with_nofile(150, 400);
	for (i = 0; i < N; i++) {
		if (h_conn_open(&c[i], H->sock) != 0)
			break;
		opened++;
	}
	cr_assert_gt(opened, 340, "only %d connections could be made", opened);
	/* A served client answers a ping; a refused one has its error first. */
	for (i = 0; i < opened; i++) {
		(void)h_conn_send(&c[i], ping, strlen(ping), 5000);
		line = h_conn_line(&c[i], 10000);
		cr_assert_not_null(line, "connection %d: no reply", i);
		if (strstr(line, "\"pong\"") == NULL) {
			cr_assert_not_null(strstr(line, "out of file "
			    "descriptors"), "connection %d: %s", i, line);
			cr_assert_not_null(strstr(line, "\"code\":7"), "%s",
			    line);
			refused++;
		}
		free(line);
	}
	cr_assert_gt(refused, 0, "no client was refused of %d", opened);
	cr_assert_lt(refused, opened - 300, "%d of %d refused", refused,
	    opened);
	for (i = 0; i < opened; i++)
		h_conn_close(&c[i]);
	free(c);
	cr_assert(h_daemon_ping(), "the daemon no longer answers");
	/* A daemon in the foreground logs to its standard error. */
	h_ctx_path(path, sizeof path, "daemon.out");
	log = h_read_file(path, NULL);
	cr_assert(log != NULL && strstr(log, "refused a client: the daemon is "
	    "out of file descriptors") != NULL, "daemon log: %s", log);
	free(log);
}

/*
 * Unfinished request lines have one budget across connections: clients
 * that each hold almost 1 MiB without a line feed are dropped with a
 * reason once the total passes 64 MiB, and the daemon still answers.
 */
Test(limits, unfinished_lines_have_a_total_budget)
{
	enum { N = 80, PART = 1000000 };
	struct h_conn	 c[N], probe;
	char		*half = malloc(PART), *line;
	json_t		*r;
	int		 i, dropped = 0;

	memset(half, ' ', PART);
	h_daemon_fg();
	for (i = 0; i < N; i++) {
		cr_assert_eq(h_conn_open(&c[i], H->sock), 0, "connect %d", i);
		/* A peer that drops us makes the send fail: that is counted below. */
		(void)h_conn_send(&c[i], half, PART, 10000);
	}
	for (i = 0; i < N; i++) {
		if ((line = h_conn_line(&c[i], i == N - 1 ? 5000 : 100)) ==
		    NULL)
			continue;
		cr_assert_not_null(strstr(line, "unfinished request lines"),
		    "connection %d: %s", i, line);
		dropped++;
		free(line);
	}
	/* 67 of them fit in 64 MiB; each later one is over the budget. */
	cr_assert_geq(dropped, N - 68, "only %d of %d dropped", dropped, N);
	cr_assert_lt(dropped, N, "every client was dropped");
	cr_assert_eq(h_conn_open(&probe, H->sock), 0, "connect");
	r = h_conn_call(&probe, "ping", "{}", 5000);
	cr_assert_not_null(h_jpath(r, "result.pong"), "ping while held");
	json_decref(r);
	h_conn_close(&probe);
	for (i = 0; i < N; i++)
		h_conn_close(&c[i]);
	free(half);
}

/* A string of n copies of ch, malloc'd. */
static char *
filled(size_t n, char ch)
{
	char *s = malloc(n + 1);

	memset(s, ch, n);
	s[n] = '\0';
	return s;
}

/*
 * Sessions whose argv is about 400 KB each: list cuts it in rows (status
 * keeps it whole), and list and stop --all answer and exit 0.
 */
Test(limits, huge_argv_does_not_break_list_or_stop)
{
	char		*big = filled(100000, 'a'), ids[32];
	long		 id[3];
	json_t		*j, *row;
	struct h_res	 r;
	int		 i;

	for (i = 0; i < 3; i++)
		id[i] = h_cli_launch(H_ARGS("--kind", "exec", "--", "sh", "-c",
		    "sleep 100", big, big, big, big));
	j = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(json_object_get(j, "sessions")), 3,
	    "list rows");
	row = json_array_get(json_object_get(j, "sessions"), 0);
	cr_assert(json_is_true(json_object_get(row, "argv_cut")), "argv_cut");
	json_decref(j);
	j = h_cli_status(id[0]);
	cr_assert_eq(json_array_size(json_object_get(j, "argv")), 7,
	    "status keeps argv whole");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(j,
	    "argv"), 6)), big, "the last argument whole");
	json_decref(j);
	h_cli(&r, H_ARGS("list"));
	cr_assert_eq(r.code, 0, "list: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	h_cli(&r, H_ARGS("--json", "stop", "--all"));
	cr_assert_eq(r.code, 0, "stop --all: exit %d (%s)", r.code, r.err);
	j = json_loads(r.out, 0, NULL);
	cr_assert_eq(h_jint(j, "stopped", -1), 3, "stopped: %s", r.out);
	json_decref(j);
	h_run_free(&r);
	for (i = 0; i < 3; i++)
		h_cli_expect_state(id[i], "exited", h_idstr(id[i], ids,
		    sizeof ids));
	free(big);
}

/*
 * list pages: limit and offset walk the table with next_offset, total
 * counts it all; pages are cut by size too, and dbgctl list fetches every
 * page (here 130 rows of 5 KB, more than one page's 512 KiB), as the
 * table and as --json.
 */
Test(limits, list_pages_and_the_cli_reads_them_all)
{
	enum { N = 130 };
	char		*arg = filled(5000, 'b'), *line;
	struct h_conn	 c;
	json_t		*r, *row;
	struct h_res	 res;
	long		 id = 0;
	int		 i;

	for (i = 0; i < N; i++)
		id = h_cli_launch(H_ARGS("--kind", "exec", "--", "true", arg));
	h_cli_expect_exit(id, 0, 10000, "the last session");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	r = h_conn_call(&c, "list", "{\"limit\":2,\"offset\":3}", 5000);
	cr_assert_eq(json_array_size(h_jpath(r, "result.sessions")), 2,
	    "a page of 2");
	cr_assert_eq(h_jint(r, "result.total", -1), N, "total");
	cr_assert_eq(h_jint(r, "result.next_offset", -1), 5, "next_offset");
	cr_assert_eq(h_jint(json_array_get(h_jpath(r, "result.sessions"), 0),
	    "id", -1), 4, "the page's first id");
	json_decref(r);
	r = h_conn_call(&c, "list", "{}", 5000);
	cr_assert_lt(json_array_size(h_jpath(r, "result.sessions")), N,
	    "one page held all %d rows of 5 KB", N);
	cr_assert_gt(h_jint(r, "result.next_offset", -1), 0, "next_offset");
	json_decref(r);
	r = h_conn_call(&c, "list", "{\"offset\":129}", 5000);
	cr_assert(json_is_null(h_jpath(r, "result.next_offset")),
	    "the last page has a next_offset");
	json_decref(r);
	h_conn_close(&c);
	h_cli(&res, H_ARGS("list"));
	cr_assert_eq(res.code, 0, "list: exit %d (%s)", res.code, res.err);
	/* A header and one line a session. */
	for (i = 0, line = res.out; (line = strchr(line, '\n')) != NULL; line++)
		i++;
	cr_assert_eq(i, N + 1, "dbgctl list printed %d lines", i);
	h_run_free(&res);
	/* --json prints the rows of every page, whole, in order. */
	r = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(h_jpath(r, "sessions")), N,
	    "dbgctl --json list printed %zu rows",
	    json_array_size(h_jpath(r, "sessions")));
	for (i = 0; i < N; i++) {
		row = json_array_get(h_jpath(r, "sessions"), i);
		cr_assert(h_jint(row, "id", -1) == i + 1 && strcmp(h_jstr(row,
		    "kind") ?: "", "exec") == 0 && strncmp(json_string_value(
		    json_array_get(json_object_get(row, "argv"), 1)) ?: "",
		    "bbbb", 4) == 0, "--json list: row %d is not session %d "
		    "whole", i, i + 1);
	}
	json_decref(r);
	free(arg);
}

/*
 * An argv of 200000 empty strings is cut by what it takes as JSON, not by
 * its characters: a list page with that row stays far inside the line
 * limit, and dbgctl list works.
 */
Test(limits, an_argv_of_empty_strings_is_cut_as_json)
{
	enum { N = 200000 };
	static const char list[] = "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"list\",\"params\":{\"limit\":1}}\n";
	struct h_conn	 c;
	struct h_res	 res;
	char		*req, *p, *line;
	json_t		*r;
	size_t		 i;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	req = malloc(N * 3 + 256);
	p = req + sprintf(req, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"exec\",\"cwd\":\"/\","
	    "\"argv\":[\"true\"");
	for (i = 0; i < N; i++)
		p += sprintf(p, ",\"\"");
	p += sprintf(p, "]}}\n");
	cr_assert_eq(h_conn_send(&c, req, (size_t)(p - req), 10000), 0, "send");
	free(req);
	json_decref(h_conn_recv(&c, 20000));	/* a reply, whichever */
	(void)h_conn_send(&c, list, strlen(list), 5000);
	line = h_conn_line(&c, 10000);
	cr_assert_not_null(line, "no list reply");
	cr_assert_lt(strlen(line), 64 * 1024, "a list page of one row is "
	    "%zu bytes", strlen(line));
	r = json_loads(line, 0, NULL);
	cr_assert(json_is_true(h_jpath(json_array_get(h_jpath(r,
	    "result.sessions"), 0), "argv_cut")), "argv_cut: %.200s", line);
	json_decref(r);
	free(line);
	h_conn_close(&c);
	h_cli(&res, H_ARGS("list"));
	cr_assert_eq(res.code, 0, "dbgctl list: exit %d (%s)", res.code,
	    res.err);
	h_run_free(&res);
}
