/*
 * send-keys: type into a session's console from a script, as tmux's
 * send-keys types into a pane: words that name keys (Enter, C-c, Up) are
 * those keys, other words their text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "dbgctl.h"

/* The most bytes one send-keys types (one write request). */
#define CMD_KEYS_MAX	(256 * 1024)

/* A key by its name, and the bytes a terminal sends for it. */
struct cmd_keys_name {
	const char	*name;
	const char	*bytes;
};

/* The named keys, as tmux names them, with the bytes of an xterm. */
static const struct cmd_keys_name cmd_keys_names[] = {
	{ "Enter", "\r" },
	{ "Tab", "\t" },
	{ "BTab", "\033[Z" },
	{ "Space", " " },
	{ "Escape", "\033" },
	{ "BSpace", "\177" },
	{ "Up", "\033[A" },
	{ "Down", "\033[B" },
	{ "Right", "\033[C" },
	{ "Left", "\033[D" },
	{ "Home", "\033[H" },
	{ "End", "\033[F" },
	{ "IC", "\033[2~" },
	{ "DC", "\033[3~" },
	{ "PPage", "\033[5~" },
	{ "NPage", "\033[6~" },
	{ "F1", "\033OP" },
	{ "F2", "\033OQ" },
	{ "F3", "\033OR" },
	{ "F4", "\033OS" },
	{ "F5", "\033[15~" },
	{ "F6", "\033[17~" },
	{ "F7", "\033[18~" },
	{ "F8", "\033[19~" },
	{ "F9", "\033[20~" },
	{ "F10", "\033[21~" },
	{ "F11", "\033[23~" },
	{ "F12", "\033[24~" },
	{ NULL, NULL }
};

/* What one word typed so far adds up to. */
struct cmd_keys_buf {
	char	*data;
	size_t	 len;
};

/* Add len bytes to b; -1 past CMD_KEYS_MAX. */
static int
cmd_keys_add(struct cmd_keys_buf *b, const char *data, size_t len)
{
	if (b->len + len > CMD_KEYS_MAX)
		return -1;
	if ((b->data = realloc(b->data, b->len + len + 1)) == NULL)
		client_fatal("out of memory");
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

/*
 * The key word names, as bytes into out (of at least 8): a named key, C-x
 * or ^X (Ctrl), M-x (Meta: Escape first) or M-C-x; -1 if it names none.
 */
static int
cmd_keys_lookup(const char *word, char *out, size_t *len)
{
	const struct cmd_keys_name	*k;
	size_t			 meta = 0;

	if (strncmp(word, "M-", 2) == 0 && word[2] != '\0') {
		out[0] = '\033';
		meta = 1;
		word += 2;
	}
	for (k = cmd_keys_names; k->name != NULL; k++) {
		if (strcmp(k->name, word) == 0) {
			*len = meta + strlen(k->bytes);
			memcpy(out + meta, k->bytes, strlen(k->bytes));
			return 0;
		}
	}
	if ((strncmp(word, "C-", 2) == 0 && word[2] != '\0' && word[3] ==
	    '\0') || (word[0] == '^' && word[1] != '\0' && word[2] == '\0')) {
		word += word[0] == '^' ? 1 : 2;
		out[meta] = *word == '?' ? 0x7f : *word == ' ' ? 0 :
		    (*word & 0x1f);
		*len = meta + 1;
		return 0;
	}
	if (meta == 1 && word[0] != '\0' && word[1] == '\0') {
		out[1] = *word;
		*len = 2;
		return 0;
	}
	return -1;
}

/* Type the bytes of b at the session's console; returns an exit status. */
static int
cmd_keys_write(struct cmd *self, struct client *c, const struct cmd_keys_buf *b)
{
	json_t	*result;
	char	*text;

	if ((text = b64_encode(b->data != NULL ? b->data : "", b->len)) ==
	    NULL)
		client_fatal("out of memory");
	result = client_call(c, "write", json_pack("{s:O, s:s, s:s}",
	    "session", self->session, "stream", "console", "data", text));
	free(text);
	if (result == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	json_decref(result);
	return EXIT_OK;
}

/*
 * An ended session's console is closed, as send's transport is; a write a
 * verdict ends exits as send's does.
 */
static const struct cmd_exit cmd_keys_exits[] = {
	{ "not_running", EXIT_CLOSED },
	{ "verdict", EXIT_VERDICT },
	{ NULL, EXIT_FAILED },
};

/* send-keys [-l] SESSION KEY...: type the keys at the session's console. */
static int
cmd_keys_exec(struct cmd *self, struct client *c)
{
	struct cmd_keys_buf	 b = { NULL, 0 };
	const char	*word;
	char		 key[8];
	size_t		 len;
	int		 i, literal = args_has(&self->args, "l"), rv;

	for (i = 1; (word = args_operand(&self->args, i)) != NULL; i++) {
		if (literal || cmd_keys_lookup(word, key, &len) != 0)
			rv = cmd_keys_add(&b, word, strlen(word));
		else
			rv = cmd_keys_add(&b, key, len);
		if (rv != 0) {
			free(b.data);
			return cmd_usage(self, "more than %d bytes to type",
			    CMD_KEYS_MAX);
		}
	}
	rv = cmd_keys_write(self, c, &b);
	free(b.data);
	return rv;
}

/* What help says of each option of send-keys. */
static const struct cmd_option cmd_keys_options_help[] = {
	{ "l", NULL,
	    "every KEY is text, none a key's name" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_send_keys_entry = {
	.name = "send-keys",
	.usage = "[-l] SESSION KEY...",
	.args = { "l", 2, -1 },
	.flags = CMD_SESSION,
	.exits = cmd_keys_exits,
	.exec = cmd_keys_exec,
	.summary = "type text and keys (Enter, C-c, Up, ...) at a session's console, as tmux send-keys",
	.options = cmd_keys_options_help,
};
