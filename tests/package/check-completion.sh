#!/bin/bash
# The bash completion in a plain `bash --norc`, with bash-completion loaded
# and without: commands and options from one list that matches `dbgctl
# help`, option values, signal names, and the sessions of a private daemon
# (live ones where a command needs one), with none started when none runs.
set -u
: "${DBGCTL:?}" "${DBGCTLD:?}" "${COMPLETION:?}"
. "$(dirname "$0")/tap.sh"
bc=/usr/share/bash-completion/bash_completion
sock=$tap_dir/sock
export XDG_STATE_HOME=$tap_dir/state
export PATH=$(dirname "$DBGCTL"):$PATH
chmod 700 "$tap_dir"

# The daemon detaches once it serves the socket: no wait for it here.
"$DBGCTLD" --listen "unix:$sock" || { echo "Bail out! dbgctld"; exit 1; }
tap_cleanup='"$DBGCTL" -s "$sock" stop --all >/dev/null 2>&1
"$DBGCTL" -s "$sock" shutdown >/dev/null 2>&1 ||
    kill "$(cat "$sock.pid" 2>/dev/null)" 2>/dev/null'
"$DBGCTL" -s "$sock" launch --kind exec --name myname -- sleep 100 >/dev/null ||
    { echo "Bail out! launch"; exit 1; }
"$DBGCTL" -s "$sock" launch --kind exec --name gone --wait -- true >/dev/null ||
    { echo "Bail out! launch --wait"; exit 1; }

# complete WITH_BC WORD...: the candidates for the last word, one a line,
# from a fresh bash --norc that loaded bash-completion if WITH_BC is 1.
complete_words()
{
	local with=$1
	shift
	bash --norc --noprofile -s "$with" "$bc" "$COMPLETION" "$@" <<'SH'
with=$1 bc=$2 script=$3
shift 3
[ "$with" = 1 ] && . "$bc"
. "$script" || exit 1
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
# As bash has it: "--kind = g" is the three words of "--kind=g".
COMP_LINE="${COMP_WORDS[*]}"
COMP_LINE=${COMP_LINE// = /=}
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
_dbgctl dbgctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]-}"
printf '%s\n' "${COMPREPLY[@]}" | sort -u
SH
}

# offers WITH_BC "WANT..." "NOT..." WORD...: every WANT is a candidate, no NOT is.
offers()
{
	local with=$1 want=$2 not=$3 got w
	shift 3
	got=$(complete_words "$with" "$@") || return 1
	for w in $want; do
		grep -qx -- "$w" <<<"$got" || { echo "no $w in: $got"; return 1; }
	done
	for w in $not; do
		grep -qx -- "$w" <<<"$got" && { echo "$w in: $got"; return 1; }
	done
	return 0
}

modes=0
if [ -f "$bc" ]; then
	modes="0 1"
else
	echo "# $bc is not installed: only bash without bash-completion"
fi
ok "loads in bash --norc and registers _dbgctl" \
    bash --norc --noprofile -c '. "$1" && complete -p dbgctl | grep -q "_dbgctl dbgctl"' sh "$COMPLETION"
for m in $modes; do
	how="bash-completion $([ "$m" = 1 ] && echo loaded || echo absent)"
	ok "a live session's name ($how)" \
	    offers "$m" "myname" "" dbgctl -s "$sock" stop my
	ok "stop offers live sessions only, logs ended ones too ($how)" \
	    offers "$m" "1 myname" "gone 2" dbgctl -s "$sock" stop ""
	ok "logs offers every session ($how)" \
	    offers "$m" "1 myname 2 gone" "" dbgctl -s "$sock" logs ""
	ok "rm offers ended sessions only ($how)" \
	    offers "$m" "2 gone" "1 myname" dbgctl -s "$sock" rm ""
	ok "--socket=PATH is honoured ($how)" \
	    offers "$m" "myname" "" dbgctl "--socket=$sock" status my
	ok "a command prefix ($how)" \
	    offers "$m" "status stop signal send shutdown" "list launch" dbgctl s
	ok "a command's option ($how)" \
	    offers "$m" "--kind" "--name" dbgctl launch --ki
	ok "option values: --kind, --kind=, --stop-target ($how)" eval '
	    offers "$m" "gdb gdbserver" "lldb exec" dbgctl launch --kind g &&
	    offers "$m" "gdb lldb gdbserver remote exec" "" dbgctl launch --kind = "" &&
	    offers "$m" "auto detach kill" "" dbgctl launch --stop-target ""'
	ok "stream names: expect --stream, logs --stream= ($how)" eval '
	    offers "$m" "target target-in" "console server" dbgctl expect --stream t &&
	    offers "$m" "console target target-in server" "" dbgctl logs --stream = ""'
	ok "run control: resume's ways, halt's live sessions, load --file ($how)" eval '
	    offers "$m" "--wait --halt-on-timeout --until --step" "--kind" dbgctl resume -- &&
	    offers "$m" "1 myname" "gone 2" dbgctl -s "$sock" halt "" &&
	    offers "$m" "wait-stop" "halt" dbgctl wa'
	ok "signal names after the session ($how)" \
	    offers "$m" "TERM TRAP" "INT myname" dbgctl -s "$sock" signal myname T
	ok "global options before the command ($how)" \
	    offers "$m" "--socket --connect --token-file --json" "--kind" dbgctl --
	# The options after a command, global ones too: same_options below.
	ok "-s among a command's options names the daemon ($how)" \
	    offers "$m" "myname" "" dbgctl stop -s "$sock" my
	ok "no session when no daemon answers, and none started ($how)" eval '
	    [ -z "$(complete_words "$m" dbgctl -s "$tap_dir/none/sock" stop "")" ] &&
	    [ ! -e "$tap_dir/none" ]'
done

# The script's one list against the client: the same commands, and for each
# the options its help describes, the global ones it takes, and --help.
commands()
{
	"$DBGCTL" --help | sed -n '/^commands:/,/^[^ ]/s/^  \([a-z][a-z-]*\) .*/\1/p' | sort
}
same_commands()
{
	local want got
	want=$(commands)
	got=$(complete_words 0 dbgctl "")
	[ "$want" = "$got" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
}
ok "the commands are those of dbgctl --help" same_commands
same_options()
{
	local want got
	local help
	help=$("$DBGCTL" help "$1")
	want=$({ sed -n '/^options:/,/^global/s/^  \(--*[a-zA-Z][a-z0-9-]*\).*/\1/p' <<<"$help"
	    sed -n '/^global/,$p' <<<"$help" | grep -oE '(^|[ ,])(-[a-zA-Z]|--[a-z][a-z-]*)' |
	    tr -d ' ,'; } | sort -u)
	got=$(complete_words 0 dbgctl "$1" -)
	[ "$want" = "$got" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
}
for c in $(commands); do
	ok "$c: the options of dbgctl help $c" same_options "$c"
done
# The script's own operands name commands the client has.
known_operands()
{
	local e
	. "$COMPLETION" || return 1
	for e in "${_dbgctl_operands[@]}"; do
		commands | grep -qx -- "${e%%|*}" || { echo "no command ${e%%|*}"; return 1; }
	done
}
ok "the completion's operand classes name commands of dbgctl --help" known_operands

done_testing
