/*
 * A bundle's manifest.json: the session's record (exit records with by,
 * verdict, fault, timestamps), the versions of dbgctl, gdb and the
 * server, every file with its size and what it is, what the size bound
 * cut, what could not be gathered and why; and the bundle method's result.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "daemon.h"
#include "bundle.h"

/* What each file of a bundle is, for the manifest. */
static const struct {
	const char	*name;
	const char	*what;
} bundle_whats[] = {
	{ "backtrace.txt", "thread apply all bt full" },
	{ "registers.txt", "info registers, of the selected thread" },
	{ "console.log", "the console log" },
	{ "target.log", "the target's output (the transport)" },
	{ "target-in.log", "the target's input (the transport)" },
	{ "mi.log", "the daemon's MI channel: > sent, < received" },
	{ "server.log", "the managed server's output" },
	{ "rtt0.log", "RTT up-channel 0 (rtt0)" },
	{ "rtt1.log", "RTT up-channel 1 (rtt1)" },
	{ "rtt2.log", "RTT up-channel 2 (rtt2)" },
	{ "rtt3.log", "RTT up-channel 3 (rtt3)" },
	{ "core", "a core file of the target (gcore, or of a board an ELF "
	    "core dbgctl wrote)" },
};

/* The manifest's list of files: name, bytes and what it is. */
static json_t *
bundle_manifest_list(struct bundle *b)
{
	json_t	*list = json_deep_copy(bundle_files_list(b->files, "files"));
	json_t	*e;
	size_t	 i, k;

	json_array_foreach(list, i, e)
		for (k = 0; k < sizeof bundle_whats / sizeof bundle_whats[0];
		    k++)
			if (strcmp(json_string_value(json_object_get(e, "name")),
			    bundle_whats[k].name) == 0)
				json_object_set_new(e, "what", json_string(
				    bundle_whats[k].what));
	return list;
}

/* Whether the file name was kept. */
bool
bundle_manifest_has(struct bundle *b, const char *name)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(bundle_files_list(b->files, "files"), i, e)
		if (strcmp(json_string_value(json_object_get(e, "name")),
		    name) == 0)
			return true;
	return false;
}

/* Whether a register's value is a vector register's: gdb's structure text. */
static bool
bundle_manifest_vector(json_t *v)
{
	const char *text = json_string_value(v);

	return text != NULL && *text == '{';
}

/*
 * Leave the vector registers out of every "registers" object in j (the
 * fault records, the verdict's): one record's are 100-245 KB on x86-64,
 * and the session, its fault history and its verdict each repeat them.
 */
static void
bundle_manifest_trim(json_t *j)
{
	const char	*key;
	json_t		*v, *r;
	void		*tmp;
	size_t		 i;

	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			bundle_manifest_trim(v);
		return;
	}
	json_object_foreach(j, key, v) {
		if (strcmp(key, "registers") != 0 || !json_is_object(v)) {
			bundle_manifest_trim(v);
			continue;
		}
		json_object_foreach_safe(v, tmp, key, r)
			if (bundle_manifest_vector(r))
				json_object_del(v, key);
	}
}

/* The core's command that opens it, and a board core's regions, into m. */
static void
bundle_manifest_core(struct bundle *b, json_t *m)
{
	char *cmd = bundle_core_command(b);

	json_object_set_new(m, "core_command", cmd != NULL ? json_string(cmd) :
	    json_null());
	free(cmd);
	if (b->board_info != NULL && bundle_manifest_has(b, "core"))
		json_object_set(m, "board_core", b->board_info);
}

/* The manifest: the session's record, versions, and what the bundle holds. */
json_t *
bundle_manifest(struct bundle *b)
{
	json_t *m, *server = NULL, *st = status_json(b->s);

	if (json_object_get(st, "server") != NULL)
		server = json_pack("{s:O*, s:n, s:s}", "argv",
		    json_object_get(json_object_get(st, "server"), "argv"),
		    "version", "why", "a server does not say its version "
		    "over gdb's protocol: see server.log");
	m = json_pack("{s:s, s:s, s:s, s:o, s:o, s:f, s:f, s:{s:s, s:O*, s:o*},"
	    " s:o, s:O, s:O, s:O, s:s?, s:{s:I, s:I}}",
	    "format", "dbgctl-bundle 1",
	    "path", b->path,
	    "reason", b->reason,
	    "session", st,
	    "verdict", json_incref(b->s->verdict != NULL ? b->s->verdict :
	    json_null()),
	    "started_at", b->started_at,
	    "written_at", loop_now(),
	    "versions", "dbgctl", DBGCTL_VERSION, "gdb", b->gdb_version,
	    "server", server,
	    "files", bundle_manifest_list(b),
	    "cut", bundle_files_list(b->files, "cut"),
	    "failed", bundle_files_list(b->files, "failed"),
	    "missing", b->missing,
	    "core", bundle_manifest_has(b, "core") ? "core" : NULL,
	    "bound", "bytes", (json_int_t)dmn.bundle_max, "used",
	    (json_int_t)bundle_files_used(b->files));
	if (json_object_get(m, "core") == NULL)
		json_object_set_new(m, "core", json_null());
	bundle_manifest_core(b, m);
	json_object_set(m, "fault", json_object_get(st, "fault") != NULL ?
	    json_object_get(st, "fault") : json_null());
	json_object_set(m, "exit", json_object_get(st, "exit") != NULL ?
	    json_object_get(st, "exit") : json_null());
	/* A copy: the records are the live session's. */
	st = json_deep_copy(m);
	json_decref(m);
	bundle_manifest_trim(st);
	return st;
}

/* The method's result: where the bundle is and what it holds. */
json_t *
bundle_result(struct bundle *b)
{
	json_t	*names = json_array(), *e;
	size_t	 i;

	json_array_foreach(bundle_files_list(b->files, "files"), i, e)
		json_array_append(names, json_object_get(e, "name"));
	return json_pack("{s:s, s:s, s:o, s:O, s:O, s:s?, s:I, s:I, s:b}",
	    "path", b->path, "reason", b->reason, "files", names, "cut",
	    bundle_files_list(b->files, "cut"), "missing", b->missing, "core",
	    bundle_manifest_has(b, "core") ? "core" : NULL, "bytes",
	    (json_int_t)bundle_files_used(b->files), "ms", (json_int_t)(
	    uv_now(dmn.loop) - b->t0), "tar", b->tar);
}
