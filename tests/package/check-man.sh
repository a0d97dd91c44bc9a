#!/bin/bash
# dbgctl(1) against the client's help, which is what --help prints: the
# same commands, and for each the same options in the SYNOPSIS as help
# describes (-h and --help aside), so that a new option is in both or the
# check fails.
set -u
: "${DBGCTL:?}" "${MAN:?}"
. "$(dirname "$0")/tap.sh"

# The commands, from dbgctl --help.
commands()
{
	"$DBGCTL" --help | sed -n '/^commands:/,/^[^ ]/s/^  \([a-z][a-z-]*\) .*/\1/p' | sort
}

# The options help describes for command $1, one a line, sorted.
help_options()
{
	"$DBGCTL" help "$1" |
	    sed -n '/^options:/,/^global/s/^  \(--*[a-zA-Z][a-z0-9-]*\).*/\1/p' |
	    grep -vx -- --help | sort -u
}

# The options of command $1 in the SYNOPSIS: the Fl words after ".Cm $1"
# up to the next ".Nm" (the global options come before the command), the
# "--" before a program's words aside.
man_options()
{
	awk -v cmd="$1" '
	/^\.Sh SYNOPSIS/ { syn = 1; next }
	/^\.Sh / { syn = 0 }
	!syn { next }
	/^\.(Nm|Pp)/ { in_cmd = 0; next }
	$1 == ".Cm" && !in_cmd { in_cmd = ($2 == cmd) ? 2 : 1; next }
	in_cmd == 2 {
		for (i = 1; i < NF; i++)
			if (($i == "Fl" || $i == ".Fl") && $(i + 1) != "-")
				print "-" $(i + 1)
	}' "$MAN" | sort -u
}

# The commands of the SYNOPSIS.
man_commands()
{
	awk '/^\.Sh SYNOPSIS/ { syn = 1; next } /^\.Sh / { syn = 0 }
	    syn && /^\.Nm/ { want = 1; next }
	    syn && want && $1 == ".Cm" { print $2; want = 0 }' "$MAN" | sort -u
}

same_commands()
{
	local want got
	want=$(commands)
	got=$(man_commands)
	[ -n "$want" ] && [ "$want" = "$got" ] ||
	    { diff <(echo "$want") <(echo "$got"); return 1; }
}
ok "the SYNOPSIS has the commands of dbgctl --help" same_commands

same_options()
{
	local want got
	want=$(help_options "$1")
	got=$(man_options "$1")
	[ "$want" = "$got" ] || { echo "help < > man"; diff <(echo "$want") <(echo "$got"); return 1; }
}
for c in $(commands); do
	ok "$c: the SYNOPSIS names the options of dbgctl help $c" same_options "$c"
done

done_testing
