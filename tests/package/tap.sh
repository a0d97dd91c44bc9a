# Sourced by the package tests: TAP output, one "ok"/"not ok" a check, the
# plan at the end; a temporary directory removed on exit.
tap_n=0
tap_failed=0
tap_dir=$(mktemp -d "${TMPDIR:-/tmp}/dbgctl-pkg.XXXXXX")
tap_cleanup=:
trap 'eval "$tap_cleanup"; rm -rf "$tap_dir"' EXIT
trap 'exit 1' HUP INT TERM

# ok DESCRIPTION COMMAND...: run the command, report it as one check.
ok()
{
	local what=$1 out
	shift
	tap_n=$((tap_n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $tap_n - $what"
	else
		echo "not ok $tap_n - $what"
		printf '%s\n' "$out" | sed 's/^/# /'
		tap_failed=$((tap_failed + 1))
	fi
}

# skip_all REASON: the whole script does not apply here.
skip_all()
{
	echo "1..0 # SKIP $1"
	exit 0
}

# done_testing: the plan, and the exit status.
done_testing()
{
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}
