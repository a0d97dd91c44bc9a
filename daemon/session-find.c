/*
 * Finding a session: by a reference a request gives (an id, a numeric
 * string, a name), by name, by id through the table's index.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* The session, live or not, holding a name. */
struct session *
session_by_name(const char *name, bool live_only)
{
	struct session *s, *found = NULL;

	TAILQ_FOREACH(s, &dmn.sessions, entry) {
		if (s->l.name == NULL || strcmp(s->l.name, name) != 0)
			continue;
		if (!session_ended(s))
			return s;
		if (!live_only)
			found = s;
	}
	return found;
}

/* Order sessions by id, for the table's index. */
static int
session_cmp(const struct session *a, const struct session *b)
{
	return a->id < b->id ? -1 : a->id > b->id;
}

RB_GENERATE(session_ids, session, id_entry, session_cmp)

/* Resolve a session reference: an id, a numeric string, or a name. */
struct session *
session_find(json_t *ref, struct rpc_error *err)
{
	struct session	*s;
	unsigned long	 id = 0;
	const char	*str;
	char		*end;

	if (json_is_integer(ref) && json_integer_value(ref) > 0)
		id = (unsigned long)json_integer_value(ref);
	else if (json_is_string(ref)) {
		str = json_string_value(ref);
		errno = 0;
		id = strtoul(str, &end, 10);
		if (*str == '\0' || *end != '\0' || errno != 0 ||
		    !isdigit((unsigned char)*str)) {
			if ((s = session_by_name(str, false)) != NULL)
				return s;
			rpc_error_set(err, RPC_NO_SUCH_SESSION,
			    "no session named \"%s\"", str);
			return NULL;
		}
	} else {
		rpc_error_set(err, RPC_INVALID_PARAMS,
		    "\"session\" must be an id or a name");
		return NULL;
	}
	if ((s = session_by_id(id)) != NULL)
		return s;
	rpc_error_set(err, RPC_NO_SUCH_SESSION, "no session %lu", id);
	return NULL;
}

/* The session with id, live or not, or NULL. */
struct session *
session_by_id(unsigned long id)
{
	struct session key;

	key.id = id;
	return RB_FIND(session_ids, &dmn.session_ids, &key);
}
