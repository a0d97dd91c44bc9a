/* Unit tests of signal name parsing and naming (proto/signame.c). */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>

#include "signame.h"

Test(signame, parse_names)
{
	cr_assert_eq(signame_parse("INT"), SIGINT);
	cr_assert_eq(signame_parse("SIGINT"), SIGINT);
	cr_assert_eq(signame_parse("sigint"), SIGINT);
	cr_assert_eq(signame_parse("int"), SIGINT);
	cr_assert_eq(signame_parse("SigInt"), SIGINT);
	cr_assert_eq(signame_parse("HUP"), SIGHUP);
	cr_assert_eq(signame_parse("KILL"), SIGKILL);
	cr_assert_eq(signame_parse("SIGTERM"), SIGTERM);
	cr_assert_eq(signame_parse("USR1"), SIGUSR1);
	cr_assert_eq(signame_parse("usr2"), SIGUSR2);
	cr_assert_eq(signame_parse("WINCH"), SIGWINCH);
	cr_assert_eq(signame_parse("STOP"), SIGSTOP);
	cr_assert_eq(signame_parse("CONT"), SIGCONT);
	cr_assert_eq(signame_parse("SYS"), SIGSYS);
}

Test(signame, parse_aliases)
{
	cr_assert_eq(signame_parse("IOT"), SIGABRT);
	cr_assert_eq(signame_parse("ABRT"), SIGABRT);
	cr_assert_eq(signame_parse("CLD"), SIGCHLD);
	cr_assert_eq(signame_parse("SIGCHLD"), SIGCHLD);
	cr_assert_eq(signame_parse("IO"), SIGIO);
	cr_assert_eq(signame_parse("POLL"), SIGIO);
}

Test(signame, parse_numbers)
{
	cr_assert_eq(signame_parse("2"), 2);
	cr_assert_eq(signame_parse("9"), 9);
	cr_assert_eq(signame_parse("15"), 15);
	cr_assert_eq(signame_parse("1"), 1);
	cr_assert_eq(signame_parse("02"), 2);
	cr_assert_eq(signame_parse("31"), 31);
	cr_assert_eq(signame_parse("64"), SIGRTMAX);
}

Test(signame, parse_rejects)
{
	static const char *bad[] = { "", "SIG", "sig", "0", "00", "-1", "+2",
	    " 2", "2 ", "2x", "65", "999", "99999999999999999999", "FOO",
	    "SIGFOO", "SIGSIGINT", "INTX", "IN", "SIG2", "SIG 2", "RTMIN+",
	    "RTMIN-1", "RTMAX+1", "RTMIN+x", "RTMIN+99",
	    "RTMIN+31", "RTMAX-31", "RTMIN+-1", "RT", "NULL" };
	size_t i;

	cr_assert_eq(signame_parse(NULL), -1);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(signame_parse(bad[i]), -1, "\"%s\" accepted",
		    bad[i]);
}

Test(signame, parse_realtime)
{
	cr_assert_eq(signame_parse("RTMIN"), SIGRTMIN);
	cr_assert_eq(signame_parse("SIGRTMIN"), SIGRTMIN);
	cr_assert_eq(signame_parse("rtmin+1"), SIGRTMIN + 1);
	cr_assert_eq(signame_parse("SIGRTMIN+3"), SIGRTMIN + 3);
	cr_assert_eq(signame_parse("RTMAX"), SIGRTMAX);
	cr_assert_eq(signame_parse("RTMAX-2"), SIGRTMAX - 2);
	cr_assert_eq(signame_parse("RTMIN+0"), SIGRTMIN);
	cr_assert_eq(signame_parse("RTMAX-0"), SIGRTMAX);
}

Test(signame, names)
{
	cr_assert_str_eq(signame_name(SIGINT), "INT");
	cr_assert_str_eq(signame_name(2), "INT");
	cr_assert_str_eq(signame_name(SIGKILL), "KILL");
	cr_assert_str_eq(signame_name(SIGTERM), "TERM");
	cr_assert_str_eq(signame_name(SIGHUP), "HUP");
	cr_assert_str_eq(signame_name(SIGSEGV), "SEGV");
	cr_assert_str_eq(signame_name(SIGRTMIN), "RTMIN");
	cr_assert_str_eq(signame_name(SIGRTMIN + 2), "RTMIN+2");
	cr_assert_null(signame_name(0));
	cr_assert_null(signame_name(-1));
	cr_assert_null(signame_name(SIGRTMAX + 1));
	cr_assert_null(signame_name(1000));
}

Test(signame, round_trip)
{
	const char	*name;
	char		 with_sig[32];
	int		 signo;

	for (signo = 1; signo <= SIGRTMAX; signo++) {
		if ((name = signame_name(signo)) == NULL) {
			/* Only glibc's reserved signals lack a name. */
			cr_assert(signo > 31 && signo < SIGRTMIN, "%d", signo);
			continue;
		}
		cr_assert_eq(signame_parse(name), signo, "%s", name);
		snprintf(with_sig, sizeof with_sig, "SIG%s", name);
		cr_assert_eq(signame_parse(with_sig), signo, "%s", with_sig);
	}
}
