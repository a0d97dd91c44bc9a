# bash completion for dbgctl(1): its commands, their options and option
# values, signal names, and the sessions of a daemon that is running (asked
# with `dbgctl ping` first, which never starts one, then `dbgctl list`).

# Every command, its options in the words of the client's templates ("name:"
# takes a value, one letter is a short option) and what its operands are, in
# order: live (a session that has not ended), ended (one that has), any (any
# session), sig (a signal), prog (a program, then files), files (a path), cmd
# (a command), none; a trailing "..." repeats the last. The client prints
# them from its tables (`dbgctl help --completion`, with the kinds of
# session, as the daemon's table has them); _dbgctl_load reads them once.
_dbgctl_spec=()
_dbgctl_kinds=
# The operands the client's table cannot tell (it knows a SESSION operand,
# not which sessions fit, nor a program or a signal).
_dbgctl_operands=(
	"launch|prog"
	"replay|files"
	"status|any"
	"stop|live..."
	"wait|any"
	"bundle|any files"
	"rm|ended..."
	"signal|live sig"
	"logs|any"
	"expect|any none"
	"mi|live"
	"watch|live none..."
	"help|cmd"
)
# The global options, before the command; all but help and version are
# taken among a command's options too, unless the command has its own.
_dbgctl_global_opts="s: socket: H: host: connect: token-file: json help version"
_dbgctl_global_after="s: socket: H: host: connect: token-file: json"
# SIG for `signal`: names as the daemon takes them, without SIG.
_dbgctl_signals="HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE
ALRM TERM STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF
WINCH IO PWR SYS"

# Print the options of template words $1 as typed: -x or --name.
_dbgctl_options()
{
	local w
	for w in $1; do
		w=${w%:}
		if [ ${#w} -eq 1 ]; then
			printf -- '-%s\n' "$w"
		else
			printf -- '--%s\n' "$w"
		fi
	done
}

# Whether option $2, as typed, takes a value in template words $1.
_dbgctl_takes_value()
{
	local w valued=
	# --name=V carries its value in the word itself.
	case $2 in *=*) return 1 ;; esac
	for w in $1; do
		case $w in *:) valued="$valued $w" ;; esac
	done
	_dbgctl_has_option "$valued" "$2"
}

# Whether template words $1 name option $2 as typed (-x, --name, --name=V).
_dbgctl_has_option()
{
	local w o=${2%%=*}
	for w in $1; do
		w=${w%:}
		if [ ${#w} -eq 1 ]; then
			[ "$o" = "-$w" ] && return 0
		else
			[ "$o" = "--$w" ] && return 0
		fi
	done
	return 1
}

# Template words $1 and the global options a command takes among its own.
_dbgctl_with_globals()
{
	local w out=$1
	for w in $_dbgctl_global_after; do
		case " $1 " in
		*" $w "*) ;;
		*) out+=" $w" ;;
		esac
	done
	printf '%s' "$out"
}

# Print the session ids and names ($1: live, ended or any) of the daemon that
# "${_dbgctl_run[@]}" reaches; nothing, and no daemon started, if none runs.
_dbgctl_sessions()
{
	local id name kind state rest
	local -a run=("${_dbgctl_run[@]}")
	# A daemon that does not answer must not hang the shell.
	command -v timeout >/dev/null && run=(timeout 5 "${run[@]}")
	"${run[@]}" ping >/dev/null 2>&1 || return 0
	"${run[@]}" list 2>/dev/null | {
		read -r rest
		while read -r id name kind state rest; do
			case $1:$state in
			live:exited | live:failed) continue ;;
			ended:exited | ended:failed | any:*) ;;
			ended:*) continue ;;
			esac
			printf '%s\n' "$id"
			[ "$name" = - ] || printf '%s\n' "$name"
		done
	}
}

# A word as the shell would pass it, for the values handed on to dbgctl:
# a leading ~/ and one pair of enclosing quotes undone (nothing evaluated).
_dbgctl_unquote()
{
	local v=$1
	case $v in
	\'*\' | \"*\") v=${v:1:${#v}-2} ;;
	esac
	case $v in
	\~/*) v=$HOME/${v#\~/} ;;
	esac
	printf '%s' "$v"
}

# Complete files, directories with $1 = -d, through bash-completion if loaded.
_dbgctl_files()
{
	if declare -F _filedir >/dev/null; then
		_filedir $1
		return
	fi
	compopt -o filenames 2>/dev/null
	# One a line, so that a name with a space stays one.
	if [ "${1-}" = -d ]; then
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}

# Complete a program: a path, else a file on PATH (no shell function,
# keyword, alias or builtin but those that are files too: the daemon runs
# files), each once.
_dbgctl_program()
{
	local -a cmds shell
	local -A seen=()
	local e
	if [[ $cur == */* ]]; then
		_dbgctl_files
		return
	fi
	mapfile -t shell < <(compgen -A function -A keyword -A alias -- "$cur"
	    compgen -A builtin -- "$cur" | while read -r e; do
		    type -P -- "$e" >/dev/null || printf '%s\n' "$e"; done)
	for e in "${shell[@]}"; do
		seen[$e]=1
	done
	mapfile -t cmds < <(compgen -A command -- "$cur")
	COMPREPLY=()
	for e in "${cmds[@]}"; do
		[ -n "${seen[$e]-}" ] && continue
		seen[$e]=1
		COMPREPLY+=("$e")
	done
}

# Complete the value of option $1 (as typed).
_dbgctl_value()
{
	case $1 in
	--kind)
		COMPREPLY=($(compgen -W "$_dbgctl_kinds" -- "$cur")) ;;
	--stop-target)
		COMPREPLY=($(compgen -W "auto detach kill" -- "$cur")) ;;
	--on-deadline)
		COMPREPLY=($(compgen -W "stop hold" -- "$cur")) ;;
	--stream)
		COMPREPLY=($(compgen -W "console target target-in server semihost watch rtt0 rtt1 rtt2 rtt3" -- "$cur")) ;;
	--cwd | --artifacts)
		_dbgctl_files -d ;;
	-s | --socket | --token-file | --file)
		_dbgctl_files ;;
	--debugger | --qemu)
		_dbgctl_program ;;
	-H | --host | --connect)
		COMPREPLY=($(compgen -W "ssh:// tcp: unix:" -- "$cur"))
		compopt -o nospace 2>/dev/null
		declare -F __ltrim_colon_completions >/dev/null &&
		    __ltrim_colon_completions "$cur" ;;
	--listen)
		if [[ $cur == unix:* ]]; then
			local path=${cur#unix:} f
			COMPREPLY=()
			for f in $(compgen -f -- "$path"); do
				COMPREPLY+=("unix:$f")
			done
		else
			COMPREPLY=($(compgen -W "unix: tcp:" -- "$cur"))
			compopt -o nospace 2>/dev/null
		fi
		declare -F __ltrim_colon_completions >/dev/null &&
		    __ltrim_colon_completions "$cur" ;;
	*)
		COMPREPLY=() ;;
	esac
}

# Complete operand $1 (counted from 0) of the command whose operands are $2.
_dbgctl_operand()
{
	local -a kinds=($2)
	local n=$1 kind e
	if [ "$n" -ge ${#kinds[@]} ]; then
		kind=${kinds[${#kinds[@]}-1]}
		case $kind in
		*...) ;;
		prog) kind=files ;;
		*) kind=none ;;
		esac
	else
		kind=${kinds[n]}
	fi
	case ${kind%...} in
	live | ended | any)
		COMPREPLY=($(compgen -W "$(_dbgctl_sessions "${kind%...}")" -- "$cur")) ;;
	sig)
		COMPREPLY=($(compgen -W "$_dbgctl_signals" -- "$cur")) ;;
	cmd)
		COMPREPLY=()
		for e in "${_dbgctl_spec[@]}"; do
			[[ ${e%%|*} == "$cur"* ]] && COMPREPLY+=("${e%%|*}")
		done ;;
	prog)
		_dbgctl_program ;;
	files)
		_dbgctl_files ;;
	*)
		COMPREPLY=() ;;
	esac
}

# Read the commands and kinds from the client run as $1, once a shell.
_dbgctl_load()
{
	local line e
	[ ${#_dbgctl_spec[@]} -gt 0 ] && return 0
	while IFS= read -r line; do
		case $line in
		"kinds "*)
			_dbgctl_kinds=${line#kinds }
			continue ;;
		esac
		for e in "${_dbgctl_operands[@]}"; do
			[ "${e%%|*}" = "${line%%|*}" ] && line=${line%|*}\|${e#*|}
		done
		_dbgctl_spec+=("$line")
	done < <("$1" help --completion 2>/dev/null)
}

# The completion function: words before the cursor decide what comes.
_dbgctl()
{
	local cur prev words cword split
	if declare -F _init_completion >/dev/null; then
		_init_completion -s -n : || return
	else
		# Without bash-completion: COMP_WORDS, with "--opt" "=" "value"
		# joined and split again as _init_completion -s does.
		local i last
		words=()
		for ((i = 0; i <= COMP_CWORD; i++)); do
			last=
			[ ${#words[@]} -gt 0 ] && last=${words[-1]}
			if [[ ${COMP_WORDS[i]} == = && $last == --* &&
			    $last != *=* ]] || [[ $last == --*= ]]; then
				words[-1]+=${COMP_WORDS[i]}
			else
				words+=("${COMP_WORDS[i]}")
			fi
		done
		cword=$((${#words[@]} - 1))
		cur=${words[cword]}
		prev=${words[cword-1]-}
		if [[ $cur == --*=* ]]; then
			prev=${cur%%=*}
			cur=${cur#*=}
			split=true
		fi
	fi

	# The program as typed, the global options given, the command.
	local -a _dbgctl_run=()
	local i=1 w v cmd='' opts=$_dbgctl_global_opts own='' ops='' e dashdash='' nops=0
	_dbgctl_run=("$(_dbgctl_unquote "${words[0]}")")
	_dbgctl_load "${_dbgctl_run[0]}"
	while [ $i -lt $cword ]; do
		w=${words[i]}
		# A global option among the command's (before its operands).
		if [ -n "$cmd" ] && [ -z "$dashdash" ] && [ $nops -eq 0 ] &&
		    ! _dbgctl_has_option "$own" "$w"; then
			case $w in
			-s | --socket | -H | --host | --connect | --token-file)
				v=$(_dbgctl_unquote "${words[i+1]-}")
				[ $((i + 1)) -lt $cword ] &&
				    _dbgctl_run+=("$w" "$v")
				i=$((i + 2))
				continue ;;
			--socket=* | --host=* | --connect=* | --token-file=* | -s?* | -H?*)
				_dbgctl_run+=("$(_dbgctl_unquote "$w")")
				i=$((i + 1))
				continue ;;
			esac
		fi
		if [ -z "$cmd" ]; then
			case $w in
			-s | --socket | -H | --host | --connect | --token-file)
				v=$(_dbgctl_unquote "${words[i+1]-}")
				[ $((i + 1)) -lt $cword ] &&
				    _dbgctl_run+=("$w" "$v")
				i=$((i + 2))
				continue ;;
			--socket=* | --host=* | --connect=* | --token-file=* | -s?* | -H?*)
				_dbgctl_run+=("$(_dbgctl_unquote "$w")") ;;
			-*) ;;
			*)
				for e in "${_dbgctl_spec[@]}"; do
					[ "${e%%|*}" = "$w" ] || continue
					cmd=$w
					e=${e#*|}
					own=${e%%|*}
					opts=$(_dbgctl_with_globals "$own")
					ops=${e#*|}
				done
				# An unknown command: nothing sensible follows.
				[ -n "$cmd" ] || return 0 ;;
			esac
		elif [ -n "$dashdash" ] || [ $nops -gt 0 ]; then
			# getopt stops at the first operand or "--" ("+" mode).
			nops=$((nops + 1))
		elif [ "$w" = -- ]; then
			dashdash=1
		elif [[ $w == -* ]]; then
			_dbgctl_takes_value "$opts" "$w" && i=$((i + 1))
		else
			nops=$((nops + 1))
		fi
		i=$((i + 1))
	done

	# Beside a "-s" or "--opt=" whose value is being typed: the value.
	if [ -z "$dashdash" ] && [ $nops -eq 0 ] &&
	    _dbgctl_takes_value "$opts" "$prev"; then
		_dbgctl_value "$prev"
		return 0
	fi
	# A value attached to an option that takes none: nothing to offer.
	[ "${split-}" = true ] && return 0
	if [ -z "$dashdash" ] && [ $nops -eq 0 ] && [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_dbgctl_options "$opts") ${cmd:+--help}" -- "$cur"))
		return 0
	fi
	if [ -z "$cmd" ]; then
		COMPREPLY=()
		for e in "${_dbgctl_spec[@]}"; do
			[[ ${e%%|*} == "$cur"* ]] && COMPREPLY+=("${e%%|*}")
		done
		return 0
	fi
	_dbgctl_operand $nops "$ops"
}

complete -F _dbgctl dbgctl
