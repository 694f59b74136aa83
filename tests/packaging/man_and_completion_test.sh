#!/usr/bin/env bash
# Keeps the man page (docs/man/arbiter.1) and the bash completion
# (scripts/completion/arbiter.bash) true to the command line they describe. The binary is
# the reference: every command `arbiter --help` lists, and every option
# `arbiter COMMAND --help` shows, must have its place in both; every option the completion
# offers must be in the man page and known to the binary. The man page must render without
# a groff warning, and the completion is run the way bash runs it, on typed lines.
# Usage: man_and_completion_test.sh ARBITER_EXE SOURCE_DIR
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 ARBITER_EXE SOURCE_DIR" >&2
  exit 2
fi
exe=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
source_dir=$(cd "$2" && pwd)
man_page=$source_dir/docs/man/arbiter.1
completion=$source_dir/scripts/completion/arbiter.bash
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failures=0
step() { echo "== $*"; }
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
ok() { echo "  ok: $*"; }

[ -x "$exe" ] || { echo "FAIL: $exe is not an executable" >&2; exit 1; }
[ -f "$man_page" ] || { echo "FAIL: $man_page is missing" >&2; exit 1; }
[ -f "$completion" ] || { echo "FAIL: $completion is missing" >&2; exit 1; }

# The man page's text, with the roff markup that would hide an option taken out: fonts,
# \- for a minus, thin and zero-width spaces, quotes, and the macro name of a request.
# Each line is prefixed with its section and, under COMMANDS, the command whose top-level
# .TP entry it belongs to (the first word of the tag), so that an option counts only
# where it is described.
man_text() {
  awk '
    function clean(s) {
      if (s ~ /^\.\\"/) return ""
      sub(/^\.[A-Za-z]+[ \t]*/, "", s)
      gsub(/\\f(\[[^]]*\]|\(..|.)/, "", s)
      gsub(/\\-/, "-", s)
      gsub(/\\[|&%^]/, "", s)
      gsub(/\\e/, "\\", s)
      gsub(/\\c$/, "", s)
      gsub(/"/, "", s)
      return s
    }
    /^\.SH/ { section = clean($0); depth = 0; entry = ""; tag = 0; next }
    section == "COMMANDS" && /^\.RS/ { depth++; next }
    section == "COMMANDS" && /^\.RE/ { if (depth > 0) depth--; next }
    section == "COMMANDS" && depth == 0 && /^\.TP/ { tag = 1; next }
    {
      text = clean($0)
      if (tag) {
        split(text, first, /[ \t]+/)
        entry = first[1]
        sub(/,$/, "", entry)
        tag = 0
      }
      printf "%s\t%s\t%s\n", section, entry, text
    }
  ' "$man_page"
}
man_text >"$work/man.txt"

# Whether the word (a command or an option) stands alone in the text on stdin: --truth
# must not be found inside --truth-file.
has_word() {
  grep -qE -- "(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|$)"
}

step "the commands of '$exe --help'"
"$exe" --help >"$work/help.txt" || { echo "FAIL: '$exe --help' exits $?" >&2; exit 1; }
mapfile -t commands < <(grep -oE '^  arbiter [a-z][a-z-]*' "$work/help.txt" | awk '{ print $2 }' | sort -u)
[ ${#commands[@]} -gt 0 ] || { echo "FAIL: no command found in '$exe --help'" >&2; exit 1; }
echo "  ${commands[*]}"

# The completion, sourced and called as bash calls it. bash splits a line into COMP_WORDS
# at blanks and also at '=' and ':' (COMP_WORDBREAKS): `--players honest=3,sp` is
# `honest` `=` `3,sp`, and the word readline replaces (the function's second argument) is
# only `3,sp`; after a trailing '=' it is empty while COMP_WORDS ends with `=` (as bash 5.2
# does it). No quoting here: the lines below need none.
# shellcheck source=scripts/completion/arbiter.bash
source "$completion"
spec=$(complete -p arbiter 2>/dev/null) || { echo "FAIL: $completion registers no completion for arbiter" >&2; exit 1; }
function_name=$(sed -nE 's/.*-F ([^ ]+).*/\1/p' <<<"$spec")
[ -n "$function_name" ] || { echo "FAIL: '$spec' names no function (complete -F)" >&2; exit 1; }

complete_line() {
  local line=$1 token piece rlword=""
  COMP_WORDS=()
  for token in $line; do
    while [ -n "$token" ]; do
      if [[ $token =~ ^([=:]+)(.*)$ || $token =~ ^([^=:]+)(.*)$ ]]; then
        COMP_WORDS+=("${BASH_REMATCH[1]}")
        token=${BASH_REMATCH[2]}
      fi
    done
  done
  if [[ $line == *" " ]]; then
    COMP_WORDS+=("")
  else
    piece=${COMP_WORDS[${#COMP_WORDS[@]} - 1]}
    [[ $piece == [=:]* ]] || rlword=$piece
  fi
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  "$function_name" "${COMP_WORDS[0]}" "$rlword" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort -u
}

# `expect_completion LINE WORD...`: the completion of LINE is exactly these words.
expect_completion() {
  local line=$1 got want
  shift
  got=$(complete_line "$line" | tr '\n' ' ' | sed 's/ $//')
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" = "$want" ]; then
    ok "'$line<TAB>' -> ${got:-(nothing)}"
  else
    fail "'$line<TAB>' completes to '${got}', expected '${want}'"
  fi
}

step "each command in the man page (SYNOPSIS and a COMMANDS entry) and in the completion"
synopsis=$(awk -F'\t' '$1 == "SYNOPSIS" { print $3 }' "$work/man.txt")
completed_commands=$(complete_line "arbiter ")
for command in "${commands[@]}"; do
  has_word "$command" <<<"$synopsis" || fail "the man page's SYNOPSIS lacks '$command'"
  awk -F'\t' -v c="$command" '$1 == "COMMANDS" && $2 == c' "$work/man.txt" | grep -q . ||
    fail "the man page has no COMMANDS entry (.TP) for '$command'"
  grep -qxF -- "$command" <<<"$completed_commands" || fail "'arbiter <TAB>' does not offer '$command'"
done
ok "${#commands[@]} commands"

step "the options of 'arbiter' itself (the help line of '$exe --help')"
mapfile -t top_options < <(grep -E '^  arbiter help' "$work/help.txt" | grep -oE -- '--?[a-z][a-z0-9-]*' | sort -u)
commands_text=$(awk -F'\t' '$1 == "COMMANDS" { print $3 }' "$work/man.txt")
top_offered=$(complete_line "arbiter -")
for option in "${top_options[@]}"; do
  has_word "$option" <<<"$commands_text" || fail "the man page's COMMANDS section does not mention $option"
  grep -qxF -- "$option" <<<"$top_offered" || fail "'arbiter -<TAB>' does not offer $option"
done
ok "${top_options[*]}"

step "each option of 'arbiter COMMAND --help' in that command's man entry and completion"
cd "$work"
for command in "${commands[@]}"; do
  [ "$command" = help ] && continue
  "$exe" "$command" --help >"$work/usage.txt" || fail "'$command --help' exits $?"
  mapfile -t options < <(grep -oE -- '--[a-z][a-z0-9-]*' "$work/usage.txt" | sort -u)
  entry=$(awk -F'\t' -v c="$command" '$1 == "COMMANDS" && $2 == c { print $3 }' "$work/man.txt")
  offered=$(complete_line "arbiter $command -")
  for option in "${options[@]}"; do
    has_word "$option" <<<"$entry" || fail "the man page's entry for '$command' does not mention $option"
    grep -qxF -- "$option" <<<"$offered" || fail "'arbiter $command -<TAB>' does not offer $option"
  done
  echo "  $command: ${options[*]:-(no options)}"

  # The other way round: what the completion offers beyond --help is described, and the
  # binary knows it (a value is given, and no positional, so that nothing runs).
  while IFS= read -r option; do
    if [ -z "$option" ] || [ "$option" = --help ]; then continue; fi
    has_word "$option" <<<"$entry" ||
      fail "'arbiter $command -<TAB>' offers $option, which the man page's entry for '$command' does not mention"
    refusal=$("$exe" "$command" "$option" 1 2>&1 >/dev/null </dev/null || true)
    if grep -qE "unknown option|unexpected argument" <<<"$refusal"; then
      fail "'arbiter $command -<TAB>' offers $option, which 'arbiter $command' refuses: $refusal"
    fi
  done <<<"$offered"
  echo "    completion offers, all described and accepted: $(tr '\n' ' ' <<<"$offered")"
done

step "the completion, on typed lines (in a folder of fixtures)"
mkdir -p "$work/fixtures/sub" "$work/bin"
cd "$work/fixtures"
touch a.toml b.arbev c.so d.csv e.jsonl f.truth.json
cat >sub/server.toml <<'EOF'
[plugins.reference]
library = "reference"
  [plugins.lagpool]   # indented, with a comment
[plugins.reference.config.movement]
EOF
expect_completion "arbiter rep" replay
expect_completion "arbiter he" help
expect_completion "arbiter --v" --version
expect_completion "arbiter replay --log-level " trace debug info warn error off
expect_completion "arbiter evaluate a.toml b.arbev --log-level w" warn
expect_completion "arbiter import x.csv y.arbev --on-error " stop skip
expect_completion "arbiter import x.csv y.arbev --format " csv jsonl
expect_completion "arbiter ctl sock " status plugins assessments reload
expect_completion "arbiter ctl sock --json re" reload
expect_completion "arbiter ctl sub/server.toml reload " reference lagpool
expect_completion "arbiter ctl sub/server.toml status " ""
expect_completion "arbiter replay " a.toml sub
expect_completion "arbiter replay a.toml " b.arbev sub
expect_completion "arbiter replay --json a.toml --log-level info b.arbev " b.arbev sub
expect_completion "arbiter evaluate a.toml b.arbev --truth " f.truth.json sub
expect_completion "arbiter check-plugin " c.so sub
expect_completion "arbiter check-plugin c.so --config " a.toml sub
expect_completion "arbiter check-plugin c.so --events " b.arbev sub
expect_completion "arbiter import " d.csv e.jsonl sub
expect_completion "arbiter import d.csv " b.arbev sub
expect_completion "arbiter simulate --human-traces b" builtin
# --quiet takes no value, unlike simulate's other options: the output file comes next.
expect_completion "arbiter simulate --quiet " b.arbev sub
# No .toml begins with 'd': every file is offered rather than none.
expect_completion "arbiter plugins d" d.csv
expect_completion "arbiter simulate o.arbev --seed " ""
expect_completion "arbiter serve a.toml --tcp 127.0.0.1:" ""

step "simulate --players: the profiles of '$exe simulate --list-profiles'"
mapfile -t profiles < <("$exe" simulate --list-profiles | awk 'NF { print $1 }')
[ ${#profiles[@]} -gt 0 ] || fail "'$exe simulate --list-profiles' lists no profile"
first=${profiles[0]}
second=${profiles[${#profiles[@]} - 1]}
prefix=${second:0:2}
mapfile -t with_prefix < <(printf '%s\n' "${profiles[@]}" | grep "^$prefix" | sed 's/$/=/')
# The binary as typed (a path), then as found on PATH by its name.
expect_completion "$exe simulate o.arbev --players " "${profiles[@]/%/=}"
ln -s "$exe" "$work/bin/arbiter"
saved_path=$PATH
PATH=$work/bin:$PATH
expect_completion "arbiter simulate o.arbev --players $prefix" "${with_prefix[@]}"
# After 'first=3,' readline replaces only what follows the '=': the candidates keep '3,'.
expect_completion "arbiter simulate o.arbev --players $first=3,$prefix" "${with_prefix[@]/#/3,}"
expect_completion "arbiter simulate o.arbev --players $first=" ""
PATH=$saved_path

step "the man page renders without warnings"
if command -v groff >/dev/null; then
  warnings=$(groff -man -ww -z "$man_page" 2>&1 || true)
  if [ -n "$warnings" ]; then
    fail "groff -man -ww -z $man_page warns:"
    echo "$warnings" >&2
  else
    ok "groff -man -ww -z: no warnings"
  fi
else
  echo "SKIP: groff is not installed"
fi

if [ "$failures" -gt 0 ]; then
  echo "man_and_completion: $failures failure(s)" >&2
  exit 1
fi
echo "man_and_completion: OK"
