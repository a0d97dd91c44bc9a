/*
 * libFuzzer target: base64 (proto/b64.c, and the daemon's xb64_encode).
 *
 * The input is taken both as bytes and as text. As bytes: the encoding is
 * 4 * ceil(n / 3) characters of the alphabet, padded only at its end, the
 * daemon's xb64_encode writes the same, and it decodes back to the bytes.
 * As text: b64_decode accepts exactly what a plain reading of RFC 4648 with
 * padding accepts, and what it gives encodes to text that decodes the same
 * (the decoder takes non-zero pad bits, so the text itself may differ).
 */
#include <stdbool.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"
#include "fuzz.h"

/* Whether c is one of the 64 digits. */
static bool
b64_fuzz_digit(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/* Whether text is base64 as RFC 4648 writes it: quartets, "=" or "==" last. */
static bool
b64_fuzz_valid(const unsigned char *s, size_t n)
{
	size_t i, pad = 0;

	if (n % 4 != 0)
		return false;
	if (n > 0 && s[n - 1] == '=')
		pad = n > 1 && s[n - 2] == '=' ? 2 : 1;
	for (i = 0; i < n - pad; i++)
		if (!b64_fuzz_digit(s[i]))
			return false;
	return true;
}

/* Encode bytes: the length, the alphabet, the padding and the way back. */
static void
b64_fuzz_bytes(const uint8_t *data, size_t size)
{
	unsigned char	*back;
	char		*text, *xtext;
	size_t		 n = (size + 2) / 3 * 4, pad = (3 - size % 3) % 3, i;
	size_t		 blen = (size_t)-1;

	text = b64_encode(data, size);
	fuzz_check(text != NULL, "b64_encode of %zu bytes", size);
	fuzz_check(strlen(text) == n, "%zu characters for %zu bytes, not %zu",
	    strlen(text), size, n);
	for (i = 0; i < n; i++)
		fuzz_check(i >= n - pad ? text[i] == '=' :
		    b64_fuzz_digit((unsigned char)text[i]),
		    "character %zu of %zu is '%c'", i, n, text[i]);
	xtext = xb64_encode((const char *)data, size);
	fuzz_check(strcmp(xtext, text) == 0, "xb64_encode differs");
	back = b64_decode(text, n, &blen);
	fuzz_check(back != NULL, "b64_decode refused b64_encode's \"%.40s\"",
	    text);
	fuzz_check(blen == size && memcmp(back, data, size) == 0,
	    "%zu bytes decoded back, not the %zu encoded", blen, size);
	free(back);
	free(xtext);
	free(text);
}

/* Decode text: accepted exactly when valid, and stable once re-encoded. */
static void
b64_fuzz_text(const uint8_t *data, size_t size)
{
	unsigned char	*out, *again;
	char		*text;
	size_t		 len = (size_t)-1, len2 = (size_t)-1;
	bool		 valid = b64_fuzz_valid(data, size);

	/* libFuzzer's data is an exact-size copy: reading past it is caught. */
	out = b64_decode((const char *)data, size, &len);
	fuzz_check((out != NULL) == valid, "b64_decode %s %zu bytes of %s text",
	    out != NULL ? "accepted" : "refused", size,
	    valid ? "valid" : "invalid");
	if (out == NULL)
		return;
	fuzz_check(len <= size / 4 * 3 && len + 2 >= size / 4 * 3,
	    "%zu bytes from %zu characters", len, size);
	text = b64_encode(out, len);
	fuzz_check(strlen(text) == size, "re-encoded to %zu characters, not "
	    "%zu", strlen(text), size);
	again = b64_decode(text, size, &len2);
	fuzz_check(again != NULL && len2 == len && memcmp(again, out, len) == 0,
	    "the re-encoded text decodes differently");
	free(again);
	free(text);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	b64_fuzz_bytes(data, size);
	b64_fuzz_text(data, size);
	return 0;
}
