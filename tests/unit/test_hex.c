/*
 * Hex text to bytes (proto/hex.c), as gdb's MI, QEMU's monitor and the
 * protocol's "hex" give it: both cases, whole bytes only.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "hex.h"

Test(hex, digits_of_both_cases_and_nothing_else)
{
	cr_assert_eq(hex_digit('0'), 0);
	cr_assert_eq(hex_digit('9'), 9);
	cr_assert_eq(hex_digit('a'), 10);
	cr_assert_eq(hex_digit('F'), 15);
	cr_assert_eq(hex_digit('g'), -1);
	cr_assert_eq(hex_digit(' '), -1);
	cr_assert_eq(hex_digit('x'), -1);
}

Test(hex, decodes_whole_bytes)
{
	size_t		 len = 99;
	unsigned char	*p = hex_decode("00fF7a", 6, &len);

	cr_assert_not_null(p);
	cr_assert_eq(len, 3);
	cr_assert(p[0] == 0x00 && p[1] == 0xff && p[2] == 0x7a);
	free(p);
	p = hex_decode("", 0, &len);
	cr_assert_not_null(p, "no text is no bytes");
	cr_assert_eq(len, 0);
	free(p);
}

Test(hex, refuses_odd_lengths_and_non_digits)
{
	size_t len = 7;

	cr_assert_null(hex_decode("abc", 3, &len));
	cr_assert_null(hex_decode("0g", 2, &len));
	cr_assert_null(hex_decode("0x12", 4, &len));
	cr_assert_null(hex_decode("12 34", 5, &len));
	cr_assert_eq(len, 7, "a refusal leaves the length alone");
}

Test(hex, every_pair_of_digits_decodes_and_every_other_byte_is_refused)
{
	static const char	 digits[] = "0123456789abcdefABCDEF";
	unsigned char		*p;
	char			 pair[2];
	size_t			 len;
	int			 a, b;

	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++) {
			pair[0] = (char)a;
			pair[1] = (char)b;
			p = hex_decode(pair, 2, &len);
			if (a == 0 || b == 0 || strchr(digits, a) == NULL ||
			    strchr(digits, b) == NULL) {
				cr_assert_null(p, "0x%02x 0x%02x decoded", a, b);
				continue;
			}
			cr_assert_not_null(p, "%c%c refused", a, b);
			cr_assert_eq(p[0], hex_digit(a) << 4 | hex_digit(b));
			free(p);
		}
}
