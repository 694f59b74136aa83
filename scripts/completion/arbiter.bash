# Bash completion for `arbiter` (installed as share/bash-completion/completions/arbiter,
# where bash-completion loads it the first time `arbiter` is completed; or source it).
# The commands, options and fixed values mirror host/cli/*.cpp;
# tests/packaging/man_and_completion_test.sh fails when `arbiter --help` names one this
# file does not know. Only bash builtins run here, except `arbiter simulate
# --list-profiles` for the profile names, so that they never go stale.
#
# Not `set -euo pipefail`: this file is sourced into interactive shells, whose options are
# theirs. It must still work under `set -u` (the test sources it so).

_arbiter_commands="replay plugins check-plugin simulate import evaluate soak baseline serve ctl send
    luanti-bridge ddnet-bridge review help"
_arbiter_log_levels="trace debug info warn error off"
_arbiter_ctl_commands="status plugins assessments reload"

# Every option of a command, from its parser (host/cli/CMD.cpp); --help is main.cpp's.
_arbiter_options() {
    case $1 in
        replay) echo "--json --quiet --log-level --help" ;;
        plugins) echo "--help" ;;
        check-plugin) echo "--config --events --help" ;;
        simulate)
            echo "--players --seed --duration-s --tick-rate --truth --batch-events --relay" \
                "--match --accounts --human-traces --list-profiles --quiet --help"
            ;;
        import)
            echo "--format --on-error --tick-rate --labels --replay-labels --relay --match" \
                "--batch-events --quiet --help"
            ;;
        evaluate) echo "--truth --players --json --quiet --log-level --help" ;;
        soak)
            echo "--players --match-players --durations-s --seed --mix --work-dir" \
                "--human-traces --json --quiet --log-level --help"
            ;;
        baseline) echo "--quiet --log-level --help" ;;
        serve) echo "--unix --tcp --control --metrics --ready-file --log-level --help" ;;
        ctl) echo "--json --help" ;;
        send) echo "--relay --token-file --json --quiet --help" ;;
        luanti-bridge) echo "--relay --token-file --once --json --quiet --help" ;;
        ddnet-bridge) echo "--relay --token-file --state --once --json --quiet --help" ;;
        review) echo "--limit --window-days --reviewer --note --json --help" ;;
    esac
}

# The options that consume the next word: needed to tell positionals from values.
_arbiter_takes_value() {
    case "$1 $2" in
        "replay --log-level" | "evaluate --log-level" | "baseline --log-level" | \
            "serve --log-level" | "evaluate --truth") return 0 ;;
        "check-plugin --config" | "check-plugin --events") return 0 ;;
        "send --relay" | "send --token-file") return 0 ;;
        "luanti-bridge --relay" | "luanti-bridge --token-file") return 0 ;;
        "ddnet-bridge --relay" | "ddnet-bridge --token-file" | "ddnet-bridge --state") return 0 ;;
        "review --limit" | "review --window-days" | "review --reviewer" | "review --note") return 0 ;;
        "serve --unix" | "serve --tcp" | "serve --control" | "serve --metrics" | \
            "serve --ready-file") return 0 ;;
        "simulate --list-profiles" | "simulate --quiet" | "simulate --help") return 1 ;;
        "import --quiet" | "import --help") return 1 ;;
        "soak --json" | "soak --quiet" | "soak --help") return 1 ;;
        # simulate, import and soak read a value after any other --option (their parsers do).
        "simulate --"* | "import --"* | "soak --"*) return 0 ;;
    esac
    return 1
}

# Appends to COMPREPLY the words of $1 that begin with $2.
_arbiter_words_from() {
    local word
    for word in $1; do
        [[ $word == "$2"* ]] && COMPREPLY+=("$word")
    done
    return 0
}

# Files ending in one of the extensions given after the prefix, and directories to walk
# into; every file when nothing else matches (a config named without .toml, a socket, a
# trace without an extension are all legitimate), not when a fixed word already did.
_arbiter_files() {
    local prefix=$1 extension file found=0
    shift
    compopt -o filenames 2>/dev/null || true
    for extension in "$@"; do
        while IFS= read -r file; do
            COMPREPLY+=("$file")
            found=1
        done < <(compgen -f -X "!*.$extension" -- "$prefix")
    done
    if ((found || ${#COMPREPLY[@]} > 0)); then
        while IFS= read -r file; do COMPREPLY+=("$file"); done < <(compgen -d -- "$prefix")
    else
        while IFS= read -r file; do COMPREPLY+=("$file"); done < <(compgen -f -- "$prefix")
    fi
    return 0
}

# Profile names from the binary being completed (else the one on PATH), as the first
# column of `arbiter simulate --list-profiles`.
_arbiter_profiles() {
    local exe=$1 name rest
    if [[ $exe != */* ]]; then
        exe=$(type -P "$exe") || exe=$(type -P arbiter) || return 0
    fi
    [[ -x $exe ]] || return 0
    while read -r name rest; do
        [[ -n $name ]] && printf '%s\n' "$name"
    done < <("$exe" simulate --list-profiles 2>/dev/null)
    return 0
}

# The [plugins.NAME] tables of a config, for `ctl CONFIG reload PLUGIN`.
_arbiter_config_plugins() {
    local file=$1 line
    # The word as typed: a literal ~/ that the shell will expand when it runs the command.
    # shellcheck disable=SC2088
    [[ $file == "~/"* ]] && file=$HOME/${file#"~/"}
    [[ -r $file ]] || return 0
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]*\[plugins\.([A-Za-z0-9_-]+)\][[:space:]]*(#.*)?$ ]] &&
            printf '%s\n' "${BASH_REMATCH[1]}"
    done <"$file"
    return 0
}

# bash splits words at '=' and ':' (COMP_WORDBREAKS): `--players honest=3,sp` arrives as
# `honest` `=` `3,sp`, and `--tcp 127.0.0.1:7` as `127.0.0.1` `:` `7`. Glues them back
# into the words the program will see: sets `words` and `cword`, the current word cut at
# the cursor.
_arbiter_reassemble() {
    local line=${COMP_LINE:0:COMP_POINT} i word spaced
    words=()
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        spaced=0
        [[ $line == [[:space:]]* ]] && spaced=1
        line=${line#"${line%%[![:space:]]*}"}
        if ((i == COMP_CWORD)); then
            word=$line
        else
            word=${COMP_WORDS[i]}
            line=${line#"$word"}
        fi
        if ((i > 0 && !spaced)) && [[ $word == [=:]* || ${words[${#words[@]} - 1]} == *[=:] ]]; then
            words[${#words[@]} - 1]+=$word
        else
            words+=("$word")
        fi
    done
    cword=$((${#words[@]} - 1))
}

# Fills COMPREPLY with whole words for `words` and `cword`.
_arbiter_candidates() {
    local cur=${words[cword]} exe=${words[0]}

    if ((cword == 1)); then
        if [[ $cur == -* ]]; then
            _arbiter_words_from "--help -h --version" "$cur"
        else
            _arbiter_words_from "$_arbiter_commands" "$cur"
        fi
        return 0
    fi

    local command=${words[1]} prev=${words[cword - 1]}
    [[ $command == help || $command == -* ]] && return 0

    # A value of the option before the cursor.
    if [[ $prev == --* ]] && _arbiter_takes_value "$command" "$prev"; then
        case $prev in
            --log-level) _arbiter_words_from "$_arbiter_log_levels" "$cur" ;;
            --format) _arbiter_words_from "csv jsonl" "$cur" ;;
            --on-error) _arbiter_words_from "stop skip" "$cur" ;;
            --config) _arbiter_files "$cur" toml ;;
            --events) _arbiter_files "$cur" arbev ;;
            --truth | --labels) _arbiter_files "$cur" json ;;
            --human-traces)
                _arbiter_words_from "builtin" "$cur"
                _arbiter_files "$cur" csv jsonl ndjson
                ;;
            --unix | --control | --ready-file | --work-dir) _arbiter_files "$cur" ;;
            --players | --mix)
                # soak's --players is a count, the user's.
                [[ $command == soak && $prev == --players ]] && return 0
                # PROFILE=COUNT,...: names after the last comma; a count is the user's.
                local before=${cur%"${cur##*,}"} part=${cur##*,} profile
                if [[ $part != *=* ]]; then
                    while IFS= read -r profile; do
                        [[ $profile == "$part"* ]] && COMPREPLY+=("${before}${profile}=")
                    done < <(_arbiter_profiles "$exe")
                    compopt -o nospace 2>/dev/null || true
                fi
                ;;
        esac
        return 0
    fi

    if [[ $cur == -* ]]; then
        _arbiter_words_from "$(_arbiter_options "$command")" "$cur"
        return 0
    fi

    # Which positional argument the cursor is on, option values skipped.
    local i positionals=()
    for ((i = 2; i < cword; i++)); do
        if [[ ${words[i]} == --* ]]; then
            _arbiter_takes_value "$command" "${words[i]}" && i=$((i + 1))
        else
            positionals+=("${words[i]}")
        fi
    done
    local positional=${#positionals[@]}

    case $command in
        replay | evaluate | baseline)
            if ((positional == 0)); then
                _arbiter_files "$cur" toml
            else
                _arbiter_files "$cur" arbev
            fi
            ;;
        plugins | serve | soak) ((positional == 0)) && _arbiter_files "$cur" toml ;;
        review)
            case $positional in
                0) _arbiter_files "$cur" toml ;;
                1) _arbiter_words_from "queue dossier verdict export" "$cur" ;;
                3)
                    [[ ${positionals[1]} == verdict ]] &&
                        _arbiter_words_from "confirmed false_positive inconclusive" "$cur"
                    ;;
            esac
            ;;
        # Event files, then the server's socket (or an ADDRESS:PORT typed by hand).
        send) _arbiter_files "$cur" arbev sock ;;
        # The world folder (luanti) or the teehistorian folder or file (ddnet), then the
        # server's socket.
        luanti-bridge)
            if ((positional == 0)); then
                while IFS= read -r file; do COMPREPLY+=("$file"); done < <(compgen -d -- "$cur")
            else
                _arbiter_files "$cur" sock
            fi
            ;;
        ddnet-bridge) _arbiter_files "$cur" teehistorian sock ;;
        check-plugin) ((positional == 0)) && _arbiter_files "$cur" so ;;
        simulate) ((positional == 0)) && _arbiter_files "$cur" arbev ;;
        import)
            case $positional in
                # Replays may be several, or a folder: each further one, then the output.
                0) _arbiter_files "$cur" csv jsonl ndjson demo teehistorian osr ;;
                *) _arbiter_files "$cur" osr arbev ;;
            esac
            ;;
        ctl)
            case $positional in
                0) _arbiter_files "$cur" toml ;;
                1) _arbiter_words_from "$_arbiter_ctl_commands" "$cur" ;;
                2)
                    if [[ ${positionals[1]} == reload && ${positionals[0]} == *.toml ]]; then
                        local plugin
                        while IFS= read -r plugin; do
                            [[ $plugin == "$cur"* ]] && COMPREPLY+=("$plugin")
                        done < <(_arbiter_config_plugins "${positionals[0]}")
                    fi
                    ;;
            esac
            ;;
    esac
    return 0
}

# Called by bash as `_arbiter COMMAND WORD PREVIOUS`. WORD is what readline replaces:
# after a '=' or ':' only the part after it, so that part is all a candidate may keep.
_arbiter() {
    local words=() cword=0 i
    COMPREPLY=()
    _arbiter_reassemble
    _arbiter_candidates
    local kept=${words[cword]%"${2-}"}
    if [[ -n $kept ]]; then
        for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$kept"}; done
    fi
    return 0
}

complete -F _arbiter arbiter
