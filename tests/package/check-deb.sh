#!/bin/bash
# The Debian package: scripts/build-deb runs dpkg-buildpackage -us -uc -b on
# a copy of the tree in a temporary directory; the .deb holds the client,
# the daemon, the keeper where the daemon looks for it, the manual pages,
# the completion and the user units; lintian finds no error (its output is
# shown); the source tree and its parent are left as they were.
set -u
: "${SOURCE_ROOT:?}"
. "$(dirname "$0")/tap.sh"
for tool in dpkg-buildpackage dh lintian fakeroot; do
	command -v "$tool" >/dev/null ||
	    skip_all "no $tool (scripts/setup installs dpkg-dev, debhelper, lintian, fakeroot)"
done

# What the build must not touch: the tree (as git sees it) and its parent.
tree_state()
{
	git -C "$SOURCE_ROOT" status --porcelain --ignored 2>/dev/null |
	    grep -v -e '^!! build' -e '__pycache__'
	# What dpkg-buildpackage would leave there (other tests make
	# dbgctl-* temporary directories in /tmp, a checkout's parent too).
	ls -a "$(dirname "$SOURCE_ROOT")" | grep -e '^dbgctl_' -e '^dbgctl-dbgsym_'
}
before=$(tree_state)

build()
{
	deb=$("$SOURCE_ROOT/scripts/build-deb" "$tap_dir")
}
ok "dpkg-buildpackage -us -uc -b builds the .deb (in a copy of the tree)" build
deb=$(ls "$tap_dir"/dbgctl_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "Bail out! no .deb"; exit 1; }
echo "# $(basename "$deb")"

contents=$(dpkg -c "$deb")
lists()
{
	grep -q -- " \./${2#/}\$" <<<"$contents" || { echo "$2 is not in the .deb"; return 1; }
	grep -- " \./${2#/}\$" <<<"$contents" | grep -q "^$1" ||
	    { grep -- " \./${2#/}\$" <<<"$contents"; return 1; }
}
while read -r mode path; do
	ok "the .deb has $path" lists "$mode" "$path"
done <<'EOF_LIST'
-rwxr-xr-x /usr/bin/dbgctl
-rwxr-xr-x /usr/bin/dbgctld
-rwxr-xr-x /usr/lib/dbgctl/dbgctl-keeper
-rw-r--r-- /usr/share/man/man1/dbgctl.1.gz
-rw-r--r-- /usr/share/man/man8/dbgctld.8.gz
-rw-r--r-- /usr/share/man/man7/dbgctl-protocol.7.gz
-rw-r--r-- /usr/share/bash-completion/completions/dbgctl
-rw-r--r-- /usr/lib/systemd/user/dbgctld.service
-rw-r--r-- /usr/lib/systemd/user/dbgctld.socket
-rw-r--r-- /usr/share/doc/dbgctl/copyright
EOF_LIST

# The alias and its page are links: to dbgctl, to dbgctl.1 compressed.
links()
{
	grep -q -- " \./${1#/} -> $2\$" <<<"$contents" ||
	    { echo "no link $1 -> $2 in:"; grep -- "${1##*/}" <<<"$contents"; return 1; }
}
ok "the .deb links /usr/bin/dbgctl-gdb to dbgctl" \
    links /usr/bin/dbgctl-gdb dbgctl
ok "the .deb links dbgctl-gdb.1.gz to dbgctl.1.gz" \
    links /usr/share/man/man1/dbgctl-gdb.1.gz dbgctl.1.gz

x=$tap_dir/x
dpkg-deb -x "$deb" "$x"
alias_runs()
{
	local out
	out=$("$x/usr/bin/dbgctl-gdb" --help) || return 1
	grep -q '^usage: dbgctl-gdb ' <<<"$out" || { echo "$out"; return 1; }
}
ok "the packaged dbgctl-gdb runs as the alias" alias_runs
# The daemon's fallback for its keeper is meson's libexecdir, compiled in.
ok "dbgctld looks for its keeper in /usr/lib/dbgctl" \
    grep -qaF "/usr/lib/dbgctl" "$x/usr/bin/dbgctld"
ok "the client finds the daemon in /usr/bin" \
    grep -qaF "/usr/bin" "$x/usr/bin/dbgctl"
ok "the service starts /usr/bin/dbgctld" \
    grep -qx "ExecStart=/usr/bin/dbgctld --foreground" \
    "$x/usr/lib/systemd/user/dbgctld.service"
fields()
{
	local depends recommends
	depends=$(dpkg-deb -f "$deb" Depends)
	recommends=$(dpkg-deb -f "$deb" Recommends)
	echo "Depends: $depends"
	echo "Recommends: $recommends"
	for p in libuv1 libjansson4 libbsd0 libc6; do
		grep -q "\b$p\b" <<<"$depends" || return 1
	done
	[ "$recommends" = "gdb, gdbserver" ]
}
ok "Depends from shlibs, Recommends gdb and gdbserver" fields

lint()
{
	local out
	out=$(lintian --info --pedantic "$deb" 2>&1)
	echo "lintian --info --pedantic $(basename "$deb"):"
	printf '%s\n' "${out:-(nothing)}"
	! grep -q '^E: ' <<<"$out"
}
lint_out=$(lint)
lint_rc=$?
printf '%s\n' "$lint_out" | sed 's/^/# /'
ok "lintian reports no error" test "$lint_rc" -eq 0

ok "the source tree and its parent are as they were" \
    test "$(tree_state)" = "$before"

done_testing
