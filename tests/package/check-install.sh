#!/bin/bash
# meson install --destdir into a temporary directory: every file the install
# promises is there with its mode and nothing else is; the units start the
# installed daemon and pass systemd-analyze verify; -Dpython=true (a second,
# configure-only build) puts the package where Debian's python3 imports it.
set -u
: "${BUILD_ROOT:?}" "${SOURCE_ROOT:?}" "${PREFIX:?}" "${BINDIR:?}" \
    "${LIBEXECDIR:?}" "${MANDIR:?}" "${COMPLETIONSDIR:?}" "${USERUNITDIR:?}" \
    "${PYTHON:?}"
. "$(dirname "$0")/tap.sh"
d=$tap_dir/dest

ok "meson install --destdir" \
    meson install -C "$BUILD_ROOT" --destdir "$d" --no-rebuild --quiet

# has MODE PATH: PATH (under the destdir) is a regular file of mode MODE.
has()
{
	local mode
	[ -f "$d$2" ] && [ ! -L "$d$2" ] || { echo "$2: missing"; return 1; }
	mode=$(stat -c %a "$d$2")
	[ "$mode" = "$1" ] || { echo "$2: mode $mode, not $1"; return 1; }
}
expect="
755 $BINDIR/dbgctl
755 $BINDIR/dbgctld
755 $LIBEXECDIR/dbgctl-keeper
644 $MANDIR/man1/dbgctl.1
644 $MANDIR/man8/dbgctld.8
644 $MANDIR/man7/dbgctl-protocol.7
644 $COMPLETIONSDIR/dbgctl
644 $USERUNITDIR/dbgctld.service
644 $USERUNITDIR/dbgctld.socket"
while read -r mode path; do
	[ -n "$mode" ] || continue
	ok "installs $path, mode $mode" has "$mode" "$path"
done <<<"$expect"

# link TARGET PATH: PATH (under the destdir) is a symbolic link to TARGET.
link()
{
	[ -L "$d$2" ] || { echo "$2: missing, or not a link"; return 1; }
	[ "$(readlink "$d$2")" = "$1" ] ||
	    { echo "$2 -> $(readlink "$d$2"), not $1"; return 1; }
}
links="
dbgctl $BINDIR/dbgctl-gdb
dbgctl.1 $MANDIR/man1/dbgctl-gdb.1"
while read -r target path; do
	[ -n "$target" ] || continue
	ok "installs $path, a link to $target" link "$target" "$path"
done <<<"$links"

# The alias runs as a front end's gdb: its own usage, gdb's -ex refused.
alias_runs()
{
	local out
	out=$("$d$BINDIR/dbgctl-gdb" --help) || return 1
	grep -q '^usage: dbgctl-gdb ' <<<"$out" || { echo "$out"; return 1; }
	out=$("$d$BINDIR/dbgctl-gdb" -ex run 2>&1)
	[ $? -eq 2 ] && grep -q 'joined channel cannot take it' <<<"$out" ||
	    { echo "$out"; return 1; }
}
ok "the installed dbgctl-gdb runs as the alias" alias_runs

# Nothing beyond the list, and Python files only with -Dpython=true.
extra()
{
	local f out=
	while IFS= read -r f; do
		f=${f#"$d"}
		grep -qx "[0-9]* $f" <<<"$expect" && continue
		grep -qx "[^ ]* $f" <<<"$links" && continue
		[ "$PYTHON" = true ] && [[ $f == */dbgctl/*.py ]] && continue
		out+="$f is installed but not expected"$'\n'
	done < <(find "$d" -type f -o -type l)
	[ -z "$out" ] || { printf '%s' "$out"; return 1; }
}
ok "installs nothing else (python: $PYTHON)" extra

# The units name the installed daemon, and nothing is left to substitute.
units()
{
	grep -qx "ExecStart=$BINDIR/dbgctld --foreground" \
	    "$d$USERUNITDIR/dbgctld.service" || {
		grep -n '^ExecStart' "$d$USERUNITDIR/dbgctld.service"
		return 1
	}
	! grep -n '@[A-Z_]*@' "$d$USERUNITDIR"/dbgctld.*
}
ok "the service starts $BINDIR/dbgctld" units
ok "the socket listens on the client's default socket" \
    grep -qx 'ListenStream=%t/dbgctl/sock' "$d$USERUNITDIR/dbgctld.socket"

# systemd-analyze verify --user on copies whose ExecStart and ExecReload are
# the destdir's daemon and client (verify wants an executable there); any
# complaint fails.
verify()
{
	local u=$tap_dir/units out
	mkdir -p "$u" "$tap_dir/run"
	chmod 700 "$tap_dir/run"
	cp "$d$USERUNITDIR"/dbgctld.* "$u"
	sed -i "s|^\(Exec[A-Za-z]*\)=$BINDIR/|\1=$d$BINDIR/|" "$u/dbgctld.service"
	out=$(XDG_RUNTIME_DIR=$tap_dir/run systemd-analyze --user --man=no \
	    verify "$u/dbgctld.socket" "$u/dbgctld.service" 2>&1) || {
		printf '%s\n' "$out"
		return 1
	}
	[ -z "$out" ] || { printf '%s\n' "$out"; return 1; }
}
if command -v systemd-analyze >/dev/null; then
	ok "systemd-analyze verify --user accepts both units" verify
else
	echo "ok $((tap_n += 1)) - systemd-analyze verify # SKIP no systemd-analyze"
fi

# -Dpython=true: configure a second build (Debian's python3, so PATH's
# order does not choose) and install only its Python files.
pyinstall()
{
	local b=$tap_dir/build-python pd=$tap_dir/dest-python files dir
	PATH=/usr/sbin:/usr/bin:/sbin:/bin meson setup "$b" "$SOURCE_ROOT" \
	    -Dpython=true -Dtests=false --prefix "$PREFIX" >"$tap_dir/setup.log" 2>&1 ||
	    { cat "$tap_dir/setup.log"; return 1; }
	if grep -q "python3 does not search" "$tap_dir/setup.log"; then
		grep "python3 does not search" "$tap_dir/setup.log"
		return 1
	fi
	meson install -C "$b" --destdir "$pd" --no-rebuild --quiet \
	    --tags python-runtime || return 1
	files=$(cd "$pd" && find . -type f | sed 's|^\.||' | LC_ALL=C sort)
	dir=${files%%/dbgctl/*}
	# Every module of the package, as the source tree has them.
	[ "$(printf '%s\n' "$files" | sed "s|^$dir/||")" = "$(cd \
	    "$SOURCE_ROOT/python" && ls dbgctl/*.py | LC_ALL=C sort)" ] ||
	    { echo "installed: $files"; return 1; }
	/usr/bin/python3 -c 'import os, sys; n = os.path.normpath
sys.exit(n(sys.argv[1]) not in map(n, sys.path))' "$dir" ||
	    { echo "$dir is not on python3's sys.path"; return 1; }
	PYTHONPATH=$pd$dir /usr/bin/python3 -B -c 'import sys
import dbgctl, dbgctl.pytest_plugin, dbgctl.ssh
sys.exit(not dbgctl.__file__.startswith(sys.argv[1]))' "$pd"
}
ok "-Dpython=true installs the package where python3 imports it" pyinstall

done_testing
