/* Unit tests of the gdb/MI record parser, on the lines gdb 13 wrote in mi-gdb13.txt. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "mi.h"

#ifndef MI_TRANSCRIPT
#error "MI_TRANSCRIPT must name the transcript file"
#endif

#define MAX_LINES 1024

static char		*lines[MAX_LINES];
static size_t		 lens[MAX_LINES];
static size_t		 nlines;
static struct mi_record	 rec;		/* what parse() and parse_found() filled */

/* Read the transcript's lines, leaving out its "#" comments. */
static void
load(void)
{
	FILE	*f = fopen(MI_TRANSCRIPT, "r");
	char	*l = NULL;
	size_t	 cap = 0;
	ssize_t	 n;

	cr_assert_not_null(f, "cannot open %s", MI_TRANSCRIPT);
	while ((n = getline(&l, &cap, f)) > 0) {
		if (l[n - 1] == '\n')
			l[--n] = '\0';
		if (l[0] == '#')
			continue;
		cr_assert_lt(nlines, MAX_LINES);
		lines[nlines] = xstrdup(l);
		lens[nlines++] = (size_t)n;
	}
	free(l);
	fclose(f);
}

/* Free the transcript and the last record. */
static void
unload(void)
{
	mi_record_free(&rec);
	while (nlines > 0)
		free(lines[--nlines]);
}

TestSuite(transcript, .init = load, .fini = unload);
TestSuite(syntax, .fini = unload);
TestSuite(malformed, .init = load, .fini = unload);
TestSuite(fuzz, .init = load, .fini = unload);
TestSuite(quote, .fini = unload);

/* Parse len bytes from an exact-size copy, so that reading past len is caught. */
static int
parse_exact(const char *line, size_t len, struct mi_record *r, char *err,
    size_t errlen)
{
	char	*copy = xmalloc(len);
	int	 rc;

	memcpy(copy, line, len);
	rc = mi_parse(copy, len, r, err, errlen);
	free(copy);
	return rc;
}

/* Parse line into rec; it must be well-formed. */
static void
parse(const char *line)
{
	char	err[256];

	mi_record_free(&rec);
	cr_assert_eq(parse_exact(line, strlen(line), &rec, err, sizeof err), 0,
	    "refused (%s): %s", err, line);
	cr_assert(json_is_object(rec.results), "results are an object");
}

/* The first transcript line that starts with prefix and holds needle (if any). */
static const char *
find(const char *prefix, const char *needle)
{
	size_t	i;

	for (i = 0; i < nlines; i++) {
		if (strncmp(lines[i], prefix, strlen(prefix)) == 0 &&
		    (needle == NULL || strstr(lines[i], needle) != NULL))
			return lines[i];
	}
	cr_assert_fail("no line %s...%s in the transcript", prefix,
	    needle ? needle : "");
	return NULL;
}

/* Parse the transcript line find() gives into rec. */
static void
parse_found(const char *prefix, const char *needle)
{
	parse(find(prefix, needle));
}

/* The value at path ("bkpt.func", "stack[1].frame.line") in rec's results. */
static json_t *
at(const char *path)
{
	json_t		*j = rec.results;
	const char	*p = path;
	char		 key[64], *end;
	size_t		 n;

	while (*p != '\0') {
		if (*p == '[') {
			n = strtoul(p + 1, &end, 10);
			cr_assert_eq(*end, ']', "bad path %s", path);
			j = json_array_get(j, n);
			p = end + 1;
		} else {
			p += *p == '.';
			n = strcspn(p, ".[");
			cr_assert_lt(n, sizeof key);
			memcpy(key, p, n);
			key[n] = '\0';
			j = json_object_get(j, key);
			p += n;
		}
		cr_assert_not_null(j, "no %s in the results", path);
	}
	return j;
}

/* The string at path. */
static const char *
str(const char *path)
{
	json_t	*j = at(path);

	cr_assert(json_is_string(j), "%s is not a string", path);
	return json_string_value(j);
}

/* The size of the array at path. */
static size_t
size(const char *path)
{
	json_t	*j = at(path);

	cr_assert(json_is_array(j), "%s is not an array", path);
	return json_array_size(j);
}

/* Parse len bytes that must be refused; returns the cause. */
static const char *
bad(const char *line, size_t len)
{
	static char		err[256];
	struct mi_record	r;

	cr_assert_eq(parse_exact(line, len, &r, err, sizeof err), -1,
	    "accepted: %.*s", (int)len, line);
	cr_assert_null(r.results, "a refused record holds nothing");
	cr_assert_null(r.text);
	cr_assert(strncmp(err, "offset ", 7) == 0, "cause \"%s\"", err);
	return err;
}

/* The kind a record's first mark (after any token) announces. */
static enum mi_kind
kind_of(const char *line)
{
	if (strncmp(line, "(gdb)", 5) == 0)
		return MI_PROMPT;
	switch (line[strspn(line, "0123456789")]) {
	case '^':
		return MI_RESULT;
	case '*':
		return MI_EXEC;
	case '+':
		return MI_STATUS;
	case '=':
		return MI_NOTIFY;
	case '~':
		return MI_CONSOLE;
	case '@':
		return MI_TARGET;
	case '&':
		return MI_LOG;
	}
	cr_assert_fail("no mark: %s", line);
	return MI_PROMPT;
}

Test(transcript, every_line_parses_as_the_kind_it_starts_with)
{
	size_t	i, streams = 0;
	char	*dump;

	cr_assert_gt(nlines, 200);
	for (i = 0; i < nlines; i++) {
		parse(lines[i]);
		cr_assert_eq(rec.kind, kind_of(lines[i]), "kind of %s", lines[i]);
		if (rec.kind >= MI_CONSOLE && rec.kind <= MI_LOG) {
			cr_assert_not_null(rec.text, "%s", lines[i]);
			cr_assert_eq(rec.text[rec.textlen], '\0');
			streams++;
		} else
			cr_assert_null(rec.text, "%s", lines[i]);
		dump = json_dumps(rec.results, JSON_COMPACT);
		cr_assert_not_null(dump, "results dump as JSON: %s", lines[i]);
		free(dump);
	}
	cr_assert_gt(streams, 50);
}

Test(transcript, break_insert_main_is_a_done_result_with_its_bkpt)
{
	parse_found("1^done,bkpt=", NULL);
	cr_assert_eq(rec.kind, MI_RESULT);
	cr_assert(rec.has_token);
	cr_assert_eq(rec.token, 1);
	cr_assert_str_eq(rec.cls, "done");
	cr_assert_str_eq(str("bkpt.func"), "main");
	cr_assert_str_eq(str("bkpt.file"), "prog.c");
	cr_assert_str_eq(str("bkpt.line"), "8");
	cr_assert_str_eq(str("bkpt.original-location"), "main");
	cr_assert_eq(size("bkpt.thread-groups"), 1);
	cr_assert_str_eq(str("bkpt.thread-groups[0]"), "i1");
}

Test(transcript, running_is_a_result_then_an_exec_record)
{
	parse_found("4^running", NULL);
	cr_assert_eq(rec.kind, MI_RESULT);
	cr_assert_str_eq(rec.cls, "running");
	cr_assert_eq(json_object_size(rec.results), 0);
	parse_found("*running,thread-id=\"all\"", NULL);
	cr_assert_eq(rec.kind, MI_EXEC);
	cr_assert_not(rec.has_token);
	cr_assert_str_eq(rec.cls, "running");
	cr_assert_str_eq(str("thread-id"), "all");
}

Test(transcript, breakpoint_stop_has_its_frame_and_arguments)
{
	parse_found("*stopped,reason=\"breakpoint-hit\"", "bkptno=\"2\"");
	cr_assert_eq(rec.kind, MI_EXEC);
	cr_assert_str_eq(rec.cls, "stopped");
	cr_assert_str_eq(str("reason"), "breakpoint-hit");
	cr_assert_str_eq(str("frame.func"), "add");
	cr_assert_str_eq(str("frame.line"), "5");
	cr_assert_eq(size("frame.args"), 2);
	cr_assert_str_eq(str("frame.args[0].name"), "a");
	cr_assert_str_eq(str("frame.args[1].value"), "3");
	cr_assert_str_eq(str("thread-id"), "1");
	parse_found("*stopped,reason=\"breakpoint-hit\"", "bkptno=\"1\"");
	cr_assert_str_eq(str("frame.func"), "main");
	cr_assert_eq(size("frame.args"), 0, "args=[] is an empty array");
}

Test(transcript, stack_frames_are_one_key_objects)
{
	parse_found("7^done,stack=", NULL);
	cr_assert_eq(size("stack"), 2);
	cr_assert_eq(json_object_size(at("stack[0]")), 1);
	cr_assert_str_eq(str("stack[0].frame.func"), "add");
	cr_assert_str_eq(str("stack[0].frame.level"), "0");
	cr_assert_str_eq(str("stack[1].frame.func"), "main");
	cr_assert_str_eq(str("stack[1].frame.line"), "8");
	parse_found("8^done,stack-args=", NULL);
	cr_assert_str_eq(str("stack-args[0].frame.args[1].value"), "3");
	cr_assert_eq(size("stack-args[1].frame.args"), 0);
}

Test(transcript, register_names_and_values_are_arrays)
{
	size_t	i;

	parse_found("9^done,register-names=", NULL);
	cr_assert_gt(size("register-names"), 40);
	cr_assert_str_eq(str("register-names[0]"), "rax");
	cr_assert_str_eq(str("register-names[16]"), "rip");
	for (i = 0; i < size("register-names"); i++)
		cr_assert(json_is_string(json_array_get(at("register-names"),
		    i)));
	parse_found("10^done,register-values=", NULL);
	cr_assert_eq(size("register-values"), 4);
	cr_assert_str_eq(str("register-values[0].number"), "0");
	cr_assert_str_eq(str("register-values[3].number"), "3");
	cr_assert(strncmp(str("register-values[2].value"), "0x", 2) == 0);
}

Test(transcript, console_command_output_is_console_streams)
{
	parse_found("~\"Stack level 0", NULL);
	cr_assert_eq(rec.kind, MI_CONSOLE);
	cr_assert_str_eq(rec.cls, "");
	cr_assert_eq(json_object_size(rec.results), 0);
	cr_assert(strncmp(rec.text, "Stack level 0, frame at 0x", 26) == 0);
	cr_assert_eq(rec.text[rec.textlen - 1], '\n');
	parse_found("~\" Saved registers:", NULL);
	cr_assert_str_eq(rec.text, " Saved registers:\n ");
	cr_assert_eq(rec.textlen, 19);
	parse_found("11^done", NULL);
	cr_assert_eq(json_object_size(rec.results), 0);
}

Test(transcript, stream_text_has_quotes_tabs_and_newlines_undone)
{
	parse_found("~\"Using host libthread_db", NULL);
	cr_assert_str_eq(rec.text, "Using host libthread_db library "
	    "\"/lib/x86_64-linux-gnu/libthread_db.so.1\".\n");
	parse_found("~\"8\\t", NULL);
	cr_assert_str_eq(rec.text, "8\t\tint x = add(2, 3);\n");
	parse_found("~\"\\nProgram\"", NULL);
	cr_assert_str_eq(rec.text, "\nProgram");
}

Test(transcript, console_octal_and_named_escapes)
{
	static const char	want[] = "\003\033\377tab\there\n";

	parse_found("~\"\\003", NULL);
	cr_assert_eq(rec.kind, MI_CONSOLE);
	cr_assert_eq(rec.textlen, sizeof want - 1);
	cr_assert_arr_eq(rec.text, want, sizeof want);
}

Test(transcript, memory_read_gives_contents)
{
	parse_found("12^done,memory=", NULL);
	cr_assert_eq(size("memory"), 1);
	cr_assert_str_eq(str("memory[0].contents"), "0000000000000000");
	cr_assert_str_eq(str("memory[0].offset"), "0x0000000000000000");
	cr_assert(strncmp(str("memory[0].begin"), "0x", 2) == 0);
}

Test(transcript, unknown_command_is_an_error_with_msg_and_code)
{
	parse_found("13^error", NULL);
	cr_assert_eq(rec.kind, MI_RESULT);
	cr_assert_eq(rec.token, 13);
	cr_assert_str_eq(rec.cls, "error");
	cr_assert_str_eq(str("msg"), "Undefined MI command: no-such-command");
	cr_assert_str_eq(str("code"), "undefined-command");
}

Test(transcript, sigsegv_stops_in_the_named_function)
{
	parse_found("*stopped,reason=\"signal-received\"", NULL);
	cr_assert_str_eq(str("signal-name"), "SIGSEGV");
	cr_assert_str_eq(str("signal-meaning"), "Segmentation fault");
	cr_assert_str_eq(str("frame.func"), "crash_here");
	cr_assert_str_eq(str("frame.line"), "3");
	cr_assert_str_eq(str("frame.args[0].name"), "n");
	parse_found("23^done,stack=", NULL);
	cr_assert_str_eq(str("stack[0].frame.func"), "crash_here");
	cr_assert_str_eq(str("stack[1].frame.func"), "main");
	cr_assert_str_eq(str("stack[1].frame.line"), "4");
	parse_found("24^done,frame=", NULL);
	cr_assert_str_eq(str("frame.func"), "crash_here");
}

Test(transcript, thread_info_lists_threads)
{
	parse_found("15^done,threads=", NULL);
	cr_assert_eq(size("threads"), 3);
	cr_assert_str_eq(str("threads[0].id"), "1");
	cr_assert_str_eq(str("threads[1].frame.func"), "worker");
	cr_assert_str_eq(str("threads[1].state"), "stopped");
	cr_assert_str_eq(str("current-thread-id"), "2");
}

Test(transcript, break_list_is_a_table_of_bkpt_results)
{
	parse_found("16^done,BreakpointTable=", NULL);
	cr_assert_str_eq(str("BreakpointTable.nr_rows"), "3");
	cr_assert_eq(size("BreakpointTable.hdr"), 6);
	cr_assert_str_eq(str("BreakpointTable.hdr[0].col_name"), "number");
	cr_assert_eq(size("BreakpointTable.body"), 3);
	cr_assert_str_eq(str("BreakpointTable.body[0].bkpt.func"), "main");
	cr_assert_str_eq(str("BreakpointTable.body[2].bkpt.func"), "worker");
	cr_assert_str_eq(str("BreakpointTable.body[2].bkpt.times"), "1");
}

Test(transcript, thread_group_exited_is_a_notification)
{
	parse_found("=thread-group-exited,id=\"i1\",exit-code=", NULL);
	cr_assert_eq(rec.kind, MI_NOTIFY);
	cr_assert_str_eq(rec.cls, "thread-group-exited");
	cr_assert_str_eq(str("id"), "i1");
	cr_assert_str_eq(str("exit-code"), "0");
	parse("=thread-group-exited,id=\"i1\"");
	cr_assert_eq(json_object_size(rec.results), 1);
}

Test(transcript, gdb_exit_is_an_exit_result)
{
	parse_found("20^exit", NULL);
	cr_assert_eq(rec.kind, MI_RESULT);
	cr_assert_eq(rec.token, 20);
	cr_assert_str_eq(rec.cls, "exit");
	cr_assert_eq(json_object_size(rec.results), 0);
}

Test(transcript, prompt_with_its_blank)
{
	parse_found("(gdb)", NULL);
	cr_assert_eq(rec.kind, MI_PROMPT);
	cr_assert_not(rec.has_token);
	cr_assert_str_eq(rec.cls, "");
	cr_assert_null(rec.text);
	cr_assert_eq(json_object_size(rec.results), 0);
	parse("(gdb)");
	cr_assert_eq(rec.kind, MI_PROMPT);
}

Test(transcript, repeated_thread_id_becomes_an_array)
{
	parse_found("54^done,thread-ids=", NULL);
	cr_assert_eq(size("thread-ids.thread-id"), 3);
	cr_assert_str_eq(str("thread-ids.thread-id[0]"), "1");
	cr_assert_str_eq(str("thread-ids.thread-id[2]"), "3");
	cr_assert_str_eq(str("number-of-threads"), "3");
	parse_found("25^done,thread-ids=", NULL);
	cr_assert_str_eq(str("thread-ids.thread-id"), "1", "one stays a string");
}

Test(transcript, mi3_multi_location_breakpoint_has_locations)
{
	parse_found("31^done,bkpt=", NULL);
	cr_assert_str_eq(str("bkpt.addr"), "<MULTIPLE>");
	cr_assert_eq(size("bkpt.locations"), 2);
	cr_assert_str_eq(str("bkpt.locations[0].func"), "twice");
	cr_assert_str_eq(str("bkpt.locations[1].number"), "1.2");
}

Test(transcript, mi2_bare_tuples_take_the_bkpt_name)
{
	parse_found("41^done,bkpt=", NULL);
	cr_assert_eq(size("bkpt"), 3);
	cr_assert_str_eq(str("bkpt[0].addr"), "<MULTIPLE>");
	cr_assert_str_eq(str("bkpt[1].number"), "1.1");
	cr_assert_str_eq(str("bkpt[2].number"), "1.2");
	cr_assert_str_eq(str("bkpt[2].line"), "2");
	parse_found("42^done,BreakpointTable=", NULL);
	cr_assert_eq(size("BreakpointTable.body"), 3);
	cr_assert_str_eq(str("BreakpointTable.body[0].bkpt.number"), "1");
	cr_assert_str_eq(str("BreakpointTable.body[2].bkpt.number"), "1.2");
}

Test(transcript, file_name_not_utf8_gets_a_replacement_character)
{
	char	*dump;

	parse_found("61^done,bkpt=", NULL);
	cr_assert_str_eq(str("bkpt.file"), "f\xef\xbf\xbdo.c");
	cr_assert_str_eq(str("bkpt.func"), "main");
	dump = json_dumps(rec.results, JSON_ENSURE_ASCII);
	cr_assert_not_null(strstr(dump, "f\\uFFFDo.c"), "%s", dump);
	free(dump);
}

Test(transcript, remote_connected_with_target_and_log_streams)
{
	parse_found("71^connected", NULL);
	cr_assert_eq(rec.kind, MI_RESULT);
	cr_assert_str_eq(rec.cls, "connected");
	parse_found("@\"The following monitor commands", NULL);
	cr_assert_eq(rec.kind, MI_TARGET);
	cr_assert_str_eq(rec.text,
	    "The following monitor commands are supported:\n");
	parse_found("&\"warning: File transfers", NULL);
	cr_assert_eq(rec.kind, MI_LOG);
	cr_assert_not_null(strstr(rec.text, "Use \"set sysroot\" to"));
}

Test(transcript, download_status_bare_tuple_joins_the_results)
{
	parse_found("73+download", "section-sent");
	cr_assert_eq(rec.kind, MI_STATUS);
	cr_assert_eq(rec.token, 73);
	cr_assert_str_eq(rec.cls, "download");
	cr_assert_str_eq(str("section"), ".note.gnu.property");
	cr_assert_str_eq(str("section-sent"), "32");
	cr_assert_str_eq(str("total-size"), "782411");
	parse_found("73+download", "\".text\"");
	cr_assert_str_eq(str("section-size"), "560383");
}

Test(syntax, a_trailing_cr_is_ignored)
{
	parse("5^done,a=\"1\"\r");
	cr_assert_str_eq(str("a"), "1");
	parse("~\"x\"\r");
	cr_assert_eq(rec.textlen, 1);
	parse("(gdb) \r");
	cr_assert_eq(rec.kind, MI_PROMPT);
}

Test(syntax, every_escape_is_undone)
{
	static const char	want[] = "\n\t\r\a\b\f\v\033\\\"'A\0\nx\177";

	parse("~\"\\n\\t\\r\\a\\b\\f\\v\\e\\\\\\\"\\'\\101\\0\\12x\\177\"");
	cr_assert_eq(rec.textlen, sizeof want - 1);
	cr_assert_arr_eq(rec.text, want, sizeof want);
}

Test(syntax, nul_bytes_stay_in_strings_and_text)
{
	parse("^done,v=\"a\\000b\"");
	cr_assert_eq(json_string_length(at("v")), 3);
	cr_assert_arr_eq(json_string_value(at("v")), "a\0b", 3);
	parse("~\"a\\000b\"");
	cr_assert_eq(rec.textlen, 3);
	cr_assert_arr_eq(rec.text, "a\0b", 4);
}

Test(syntax, octal_utf8_is_kept_and_invalid_bytes_replaced)
{
	parse("^done,ok=\"\\303\\251t\\303\\251\",bad=\"\\303\\251\\377\","
	    "cut=\"\\342\\202a\",sur=\"\\355\\240\\200\",long=\"\\300\\257\","
	    "big=\"\\364\\220\\200\\200\",four=\"\\360\\237\\230\\200\"");
	cr_assert_str_eq(str("ok"), "\xc3\xa9t\xc3\xa9");
	cr_assert_str_eq(str("bad"), "\xc3\xa9\xef\xbf\xbd");
	cr_assert_str_eq(str("cut"), "\xef\xbf\xbd\xef\xbf\xbd" "a");
	cr_assert_str_eq(str("sur"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	cr_assert_str_eq(str("long"), "\xef\xbf\xbd\xef\xbf\xbd");
	cr_assert_str_eq(str("big"),
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	cr_assert_str_eq(str("four"), "\xf0\x9f\x98\x80");
}

/*
 * A byte that is not UTF-8 is replaced at every place of a long string,
 * where ASCII is decided a word at a time, and a raw one as much as one
 * given in octal.
 */
Test(syntax, a_bad_byte_is_replaced_at_every_place_of_a_run)
{
	char	line[128], want[64];
	size_t	at;

	for (at = 0; at < 20; at++) {
		snprintf(line, sizeof line, "^done,v=\"%.*s\\377%.*s\","
		    "raw=\"%.*s\377%.*s\"", (int)at, "abcdefghijklmnopqrst",
		    (int)(19 - at), "ABCDEFGHIJKLMNOPQRS", (int)at,
		    "abcdefghijklmnopqrst", (int)(19 - at),
		    "ABCDEFGHIJKLMNOPQRS");
		snprintf(want, sizeof want, "%.*s\xef\xbf\xbd%.*s", (int)at,
		    "abcdefghijklmnopqrst", (int)(19 - at),
		    "ABCDEFGHIJKLMNOPQRS");
		parse(line);
		cr_assert_str_eq(str("v"), want, "bad byte at %zu", at);
		cr_assert_str_eq(str("raw"), want, "raw bad byte at %zu", at);
	}
}

Test(syntax, empty_tuples_lists_and_strings)
{
	parse("^done,a={},b=[],c=\"\",d=[{},[]]");
	cr_assert(json_is_object(at("a")));
	cr_assert_eq(json_object_size(at("a")), 0);
	cr_assert_eq(size("b"), 0);
	cr_assert_str_eq(str("c"), "");
	cr_assert(json_is_object(at("d[0]")));
	cr_assert_eq(size("d[1]"), 0);
}

Test(syntax, repeats_gather_in_order_and_lists_stay_apart)
{
	parse("^done,a=[\"1\"],a=[\"2\"],a=\"3\",b={x=\"1\"},b={x=\"2\"}");
	cr_assert_eq(size("a"), 3);
	cr_assert_str_eq(str("a[0][0]"), "1");
	cr_assert_str_eq(str("a[1][0]"), "2");
	cr_assert_str_eq(str("a[2]"), "3");
	cr_assert_str_eq(str("b[1].x"), "2");
}

Test(syntax, bare_tuples_with_no_name_before_merge)
{
	parse("+download,{a=\"1\",b=\"2\"},{a=\"3\"}");
	cr_assert_eq(size("a"), 2);
	cr_assert_str_eq(str("a[1]"), "3");
	cr_assert_str_eq(str("b"), "2");
	parse("^done,t={{x=\"1\"},y=\"2\",{z=\"3\"}}");
	cr_assert_str_eq(str("t.x"), "1");
	cr_assert_str_eq(str("t.y[1].z"), "3", "it takes the name before");
}

Test(syntax, tokens_up_to_ulong_max)
{
	char	line[64];

	snprintf(line, sizeof line, "%lu^done", ULONG_MAX);
	parse(line);
	cr_assert_eq(rec.token, ULONG_MAX);
	parse("0^done");
	cr_assert(rec.has_token);
	cr_assert_eq(rec.token, 0);
	snprintf(line, sizeof line, "%lu0^done", ULONG_MAX);
	cr_assert_str_eq(bad(line, strlen(line)),
	    "offset 0: token beyond 18446744073709551615");
}

Test(syntax, names_and_classes_of_63_bytes)
{
	char	line[256];

	snprintf(line, sizeof line, "=%.63s,%.63s=\"1\"",
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_x",
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_x");
	parse(line);
	cr_assert_eq(strlen(rec.cls), 63);
	snprintf(line, sizeof line, "=%064d", 0);
	cr_assert_str_eq(bad(line, strlen(line)),
	    "offset 1: a class longer than 63 bytes");
	snprintf(line, sizeof line, "^done,%064d=\"1\"", 0);
	cr_assert_str_eq(bad(line, strlen(line)),
	    "offset 6: a variable name longer than 63 bytes");
}

Test(syntax, err_may_be_null_or_short)
{
	struct mi_record	r;
	char			err[12];

	cr_assert_eq(mi_parse("^done,", 6, &r, NULL, 0), -1);
	cr_assert_eq(mi_parse("^done,", 6, &r, err, sizeof err), -1);
	cr_assert_str_eq(err, "offset 6: e");
	mi_record_free(&r);
}

Test(malformed, each_is_refused_with_where_and_what)
{
	static const struct {
		const char	*line;
		const char	*err;
	} cases[] = {
		{ "~\"abc", "offset 1: string not closed: expected '\"' before "
		    "end of line" },
		{ "~\"abc\\", "offset 1: string not closed" },
		{ "~\"abc\\\"", "offset 1: string not closed" },
		{ "^done,bkpt={number=\"1\"", "offset 22: expected ',' or '}', "
		    "found end of line" },
		{ "^done,bkpt={number=\"1\"}}", "offset 23: expected ',' or end "
		    "of line, found '}'" },
		{ "^done,a={b=\"1\"]", "offset 14: expected ',' or '}', "
		    "found ']'" },
		{ "^done,a=[\"1\",\"2\"", "offset 16: expected ',' or ']', "
		    "found end of line" },
		{ "^done,a=[\"1\"}", "offset 12: expected ',' or ']', "
		    "found '}'" },
		{ "^done,bkpt{number=\"1\"}", "offset 10: expected '=' after "
		    "\"bkpt\", found '{'" },
		{ "^done,a\"1\"", "offset 7: expected '=' after \"a\", "
		    "found '\"'" },
		{ "^done,=\"1\"", "offset 6: expected a variable name, "
		    "found '='" },
		{ "^done,a=", "offset 8: expected a value ('\"', '{' or '['), "
		    "found end of line" },
		{ "^done,a=1", "offset 8: expected a value ('\"', '{' or '['), "
		    "found '1'" },
		{ "^done a=\"1\"", "offset 5: expected ',' or end of line, "
		    "found ' '" },
		{ "^done,", "offset 6: expected a variable name, found end of "
		    "line" },
		{ "^done,a=\"1\",", "offset 12: expected a variable name" },
		{ "^done,a=\"1\",,b=\"2\"", "offset 12: expected a variable "
		    "name, found ','" },
		{ "^,a=\"1\"", "offset 1: expected a class, found ','" },
		{ "^", "offset 1: expected a class, found end of line" },
		{ "~\"abc\" x", "offset 6: expected end of line after the "
		    "string, found ' '" },
		{ "~abc", "offset 1: expected '\"', found 'a'" },
		{ "12~\"x\"", "offset 0: a stream record takes no token" },
		{ "12", "offset 2: expected '^', '*', '+' or '=' after a "
		    "token, found end of line" },
		{ "", "offset 0: expected a record: '^', '*', '+', '=', '~', "
		    "'@', '&' or \"(gdb)\", found end of line" },
		{ "hello", "offset 0: expected a record" },
		{ "(gdb) x", "offset 6: expected end of line after \"(gdb)\", "
		    "found 'x'" },
		{ "(gd", "offset 0: expected a record" },
		{ "^done,a=\"\\q\"", "offset 10: expected one of n t r a b f v "
		    "e \\ \" ' or an octal digit after '\\', found 'q'" },
		{ "^done,a=\"\\400\"", "offset 9: octal escape \\400 is beyond "
		    "\\377" },
		{ "^done,\"x\"", "offset 6: expected a variable name, "
		    "found '\"'" },
		{ "^done,a=\"1\",\"2\"", "offset 12: expected a variable name, "
		    "found '\"'" },
		{ "^done,a=\"1\",[\"2\"]", "offset 12: expected a variable "
		    "name, found '['" },
		{ "^done,a=[\"1\",b=\"2\"]", "offset 13: expected a value" },
		{ "^done,a=[b=\"1\",\"2\"]", "offset 15: expected a variable "
		    "name, found '\"'" },
		{ "^done,a={\"1\"}", "offset 9: expected a variable name, "
		    "found '\"'" },
		{ "^done,a=\"1\"\r\r", "offset 11: expected ',' or end of line, "
		    "found byte 0x0d" },
		{ "^done,a=\"1\"x", "offset 11: expected ',' or end of line, "
		    "found 'x'" },
	};
	size_t	i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *err = bad(cases[i].line, strlen(cases[i].line));

		cr_expect(strncmp(err, cases[i].err, strlen(cases[i].err)) == 0,
		    "%s\n  gave: %s\n  want: %s", cases[i].line, err,
		    cases[i].err);
	}
}

Test(malformed, a_nul_byte_within_len_is_garbage)
{
	static const char	line[] = "=thread-created,id=\"1\"\0,x=\"2\"";

	cr_assert_str_eq(bad(line, sizeof line - 1),
	    "offset 22: expected ',' or end of line, found byte 0x00");
}

Test(malformed, bytes_past_len_are_never_read)
{
	/* A closing quote or brace just past len must not complete a record. */
	cr_assert_str_eq(bad("~\"abc\"", 5),
	    "offset 1: string not closed: expected '\"' before end of line");
	cr_assert_str_eq(bad("^done,a={b=\"1\"}", 14),
	    "offset 14: expected ',' or '}', found end of line");
	cr_assert_str_eq(bad("^done,a=\"\\1\"", 10),
	    "offset 8: string not closed: expected '\"' before end of line");
}

Test(malformed, a_real_line_cut_short_is_refused)
{
	const char		*line = find("7^done,stack=", NULL);
	size_t			 len = strlen(line), n;
	struct mi_record	 r;
	char			 err[256];

	/* "7^d" to "7^done" are whole records of their own. */
	for (n = 0; n < len; n++) {
		if (n >= strlen("7^d") && n <= strlen("7^done"))
			continue;
		cr_assert_eq(parse_exact(line, n, &r, err, sizeof err), -1,
		    "prefix of %zu accepted", n);
	}
	parse(line);
	cr_assert_str_eq(str("stack[1].frame.func"), "main");
}

Test(malformed, nesting_is_bounded)
{
	static char	line[100000 + 16] = "^done,a=";
	size_t		head = strlen(line), n, i;
	int		depth;

	/* MI_PARSE_DEPTH levels of {a=...} are fine, one more is not. */
	for (depth = MI_PARSE_DEPTH; depth <= MI_PARSE_DEPTH + 1; depth++) {
		for (i = 0, n = head; i < (size_t)depth; i++, n += 3)
			memcpy(line + n, "{a=", 3);
		memcpy(line + n, "\"\"", 2);
		n += 2;
		for (i = 0; i < (size_t)depth; i++)
			line[n++] = '}';
		line[n] = '\0';
		if (depth == MI_PARSE_DEPTH)
			parse(line);
		else
			cr_assert_str_eq(bad(line, n), "offset 200: tuples and "
			    "lists nested deeper than 64");
	}
	/* A hundred thousand open lists end at the bound, not the stack. */
	memset(line + head, '[', sizeof line - head);
	cr_assert_str_eq(bad(line, sizeof line),
	    "offset 72: tuples and lists nested deeper than 64");
}

/* A small deterministic generator, so a failure can be replayed. */
static uint64_t
fuzz_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Change buf (len bytes, room for cap) in one random way; returns the new length. */
static size_t
fuzz_mutate(char *buf, size_t len, size_t cap, uint64_t *x)
{
	static const char	 marks[] = "{}[]\",=\\~^*+@&(0123456789\r \0";
	size_t			 pos = len ? fuzz_next(x) % len : 0, n;
	char			 c = marks[fuzz_next(x) % (sizeof marks - 1)];

	switch (fuzz_next(x) % 6) {
	case 0:		/* any byte */
		c = (char)fuzz_next(x);
		/* FALLTHROUGH */
	case 1:		/* a byte that means something to MI */
		if (len > 0)
			buf[pos] = c;
		return len;
	case 2:		/* cut some bytes out */
		n = fuzz_next(x) % 9;
		n = n > len - pos ? len - pos : n;
		memmove(buf + pos, buf + pos + n, len - pos - n);
		return len - n;
	case 3:		/* insert a byte that means something */
		if (len + 1 > cap)
			return len;
		memmove(buf + pos + 1, buf + pos, len - pos);
		buf[pos] = c;
		return len + 1;
	case 4:		/* cut the line short */
		return pos;
	default:	/* copy a slice of the line over itself elsewhere */
		n = fuzz_next(x) % 32;
		if (n > len - pos)
			n = len - pos;
		memmove(buf + fuzz_next(x) % (len - n + 1), buf + pos, n);
		return len;
	}
}

Test(fuzz, random_mutations_of_real_lines_never_crash)
{
	struct mi_record	 r;
	uint64_t		 x = 0x9e3779b97f4a7c15ULL;
	size_t			 i, k, len, cap, ok = 0, refused = 0;
	char			*buf, err[256], *dump;

	for (i = 0; i < 20000; i++) {
		k = fuzz_next(&x) % nlines;
		cap = lens[k] + 64;
		buf = xmalloc(cap);
		memcpy(buf, lines[k], lens[k]);
		len = lens[k];
		for (int m = 1 + fuzz_next(&x) % 4; m > 0; m--)
			len = fuzz_mutate(buf, len, cap, &x);
		if (parse_exact(buf, len, &r, err, sizeof err) != 0) {
			cr_assert(strncmp(err, "offset ", 7) == 0, "%s", err);
			cr_assert_leq(strtoul(err + 7, NULL, 10), len);
			refused++;
		} else {
			cr_assert(json_is_object(r.results));
			cr_assert(r.text == NULL || r.text[r.textlen] == '\0');
			dump = json_dumps(r.results, JSON_COMPACT);
			cr_assert_not_null(dump);
			free(dump);
			mi_record_free(&r);
			ok++;
		}
		free(buf);
	}
	cr_assert_gt(ok, 1000, "%zu mutations parsed", ok);
	cr_assert_gt(refused, 1000, "%zu mutations refused", refused);
}

Test(quote, escapes_what_would_end_or_break_the_line)
{
	char	*q;

	q = mi_cstring_quote("info frame");
	cr_assert_str_eq(q, "\"info frame\"");
	free(q);
	q = mi_cstring_quote("echo \"hi\" \\ there\n");
	cr_assert_str_eq(q, "\"echo \\\"hi\\\" \\\\ there\\n\"");
	free(q);
	q = mi_cstring_quote("a\001b\033\177\t\r\xc3\xa9");
	cr_assert_str_eq(q, "\"a\\001b\\033\\177\\t\\r\xc3\xa9\"");
	free(q);
	q = mi_cstring_quote("");
	cr_assert_str_eq(q, "\"\"");
	free(q);
}

Test(quote, every_byte_comes_back_through_the_parser)
{
	char	 in[256], *q, *line;
	size_t	 i;

	for (i = 1; i < 256; i++)
		in[i - 1] = (char)(256 - i);
	in[255] = '\0';
	q = mi_cstring_quote(in);
	for (i = 0; q[i] != '\0'; i++)
		cr_assert((unsigned char)q[i] >= 0x20 && q[i] != 0x7f,
		    "raw control byte 0x%02x", (unsigned char)q[i]);
	xasprintf(&line, "~%s", q);
	parse(line);
	cr_assert_eq(rec.textlen, 255);
	cr_assert_arr_eq(rec.text, in, 256);
	free(line);
	free(q);
}

TestSuite(cut, .fini = unload);

/* mi_parse_cut of len bytes from an exact-size copy into rec. */
static int
parse_cut(const char *s, size_t len, char *err, size_t errlen)
{
	char	*copy = xmalloc(len + 1);
	int	 rc;

	memcpy(copy, s, len);
	mi_record_free(&rec);
	rc = mi_parse_cut(copy, len, &rec, err, errlen);
	free(copy);
	return rc;
}

/*
 * A record cut before its end still says whose it is: a result its token
 * and class, results empty; a stream its text so far, an escape the cut
 * ends early dropped.
 */
Test(cut, a_cut_record_keeps_token_class_and_text)
{
	const char	*console = "~\"ab\\ncd\\101\\\\\\10";
	char		 err[128];

	cr_assert_eq(parse_cut("42^done,value=\"xxxx", 19, err, sizeof err),
	    0, "%s", err);
	cr_assert(rec.kind == MI_RESULT && rec.has_token && rec.token == 42);
	cr_assert_str_eq(rec.cls, "done");
	cr_assert_eq(json_object_size(rec.results), 0);
	cr_assert_eq(parse_cut(console, strlen(console), err, sizeof err), 0,
	    "%s", err);
	cr_assert_eq(rec.kind, MI_CONSOLE);
	cr_assert_eq(rec.textlen, 7, "text \"%s\"", rec.text);
	cr_assert_str_eq(rec.text, "ab\ncdA\\");
	cr_assert_eq(parse_cut("~\"ab\\", 5, err, sizeof err), 0);
	cr_assert_str_eq(rec.text, "ab", "a lone backslash at the cut");
	cr_assert_eq(parse_cut("*stopped,reason=\"sig", 20, err, sizeof err),
	    0);
	cr_assert(rec.kind == MI_EXEC && !rec.has_token);
	cr_assert_str_eq(rec.cls, "stopped");
	cr_assert_neq(parse_cut("(gdb) xxxx", 10, err, sizeof err), 0);
	cr_assert_neq(err[0], '\0', "a cause");
	cr_assert_neq(parse_cut("7~\"xx", 5, err, sizeof err), 0,
	    "a stream takes no token");
}
