#!/usr/bin/env bash
# What is generated from the CLI definition agrees with it and works:
#  1. every command's --help wraps to the terminal width ($COLUMNS) and ends
#     with examples;
#  2. the bash, zsh and fish completions the build made (SHARE_DIR) are the
#     ones `gpuscope completion` prints, parse in their shell, and complete
#     commands, options and the values of a choice option (bash and fish run
#     them);
#  3. there is a man page per command, and groff reads each without a warning.
#   shell_files.sh GPUSCOPE SHARE_DIR
set -uo pipefail
gs=$(realpath "${1:?usage: shell_files.sh GPUSCOPE SHARE_DIR}")
share=$(realpath "${2:?}")
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
for tool in zsh fish groff python3; do
  command -v $tool >/dev/null || { echo "$tool not found (scripts/setup.sh installs it)"; exit 1; }
done

commands=$("$gs" --help | sed -n '/^Subcommands:/,/^$/p' | awk '/^  [a-z]/ {print $1}')
[ -n "$commands" ] || { echo "no commands in --help"; exit 1; }

# ---- --help ----------------------------------------------------------------------------------
for c in "" $commands; do
  # shellcheck disable=SC2086
  help=$(COLUMNS=72 "$gs" $c --help) || bad "gpuscope $c --help failed"
  printf '%s\n' "$help" | python3 -c '
import sys
for line in sys.stdin.read().splitlines():
    # a line may pass the width only when it is one word too long to break
    if len(line) > 72 and " " in line.strip():
        print("too wide: " + line); sys.exit(1)' || bad "gpuscope $c --help is wider than COLUMNS=72"
  examples=$(printf '%s\n' "$help" | sed -n '/^Examples:$/,$p' | tail -n +2)
  [ -n "$examples" ] || bad "gpuscope $c --help does not end with examples"
  # each example (a line at two spaces; a longer one continues further in) runs gpuscope
  printf '%s\n' "$examples" | grep '^  [^ ]' | grep -qv gpuscope && bad "gpuscope $c --help: an example without gpuscope"
done

# ---- completions -----------------------------------------------------------------------------
bash_file=$share/bash-completion/completions/gpuscope
zsh_file=$share/zsh/site-functions/_gpuscope
fish_file=$share/fish/vendor_completions.d/gpuscope.fish
cmp -s "$bash_file" <("$gs" completion bash) || bad "the installed bash completion is not the generated one"
cmp -s "$zsh_file" <("$gs" completion zsh) || bad "the installed zsh completion is not the generated one"
cmp -s "$fish_file" <("$gs" completion fish) || bad "the installed fish completion is not the generated one"
bash -n "$bash_file" || bad "bash cannot parse its completion"
zsh -n "$zsh_file" || bad "zsh cannot parse its completion"
fish -n "$fish_file" || bad "fish cannot parse its completion"
for c in $commands; do
  grep -q "'$c:" "$zsh_file" || bad "zsh completion lacks the command $c"
done

complete_bash() {  # WORDS… : what bash completes for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuscope; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$bash_file" "$@"
}
[ "$(complete_bash gpuscope sta)" = stats ] || bad "bash: gpuscope sta<TAB> is not stats: $(complete_bash gpuscope sta)"
complete_bash gpuscope stats --for | grep -qx -- --format || bad "bash: gpuscope stats --for<TAB> lacks --format"
[ "$(complete_bash gpuscope stats t.gscope --format '' | sort | tr '\n' ' ')" = "csv json table " ] ||
  bad "bash: --format<TAB> is not csv json table"
[ "$(complete_bash gpuscope check a b --noise o | sort | tr '\n' ' ')" = "off on " ] || bad "bash: --noise o<TAB>"

complete_fish() { fish -c "source $fish_file; complete -C '$1'" | cut -f1; }
complete_fish "gpuscope sta" | grep -qx stats || bad "fish: gpuscope sta<TAB> lacks stats"
[ "$(complete_fish 'gpuscope stats --format ' | sort | tr '\n' ' ')" = "csv json table " ] ||
  bad "fish: --format<TAB> is not csv json table"
complete_fish "gpuscope check --allow" | grep -qx -- --allow-skip || bad "fish: check --allow<TAB> lacks --allow-skip"

# ---- man pages -------------------------------------------------------------------------------
man1=$share/man/man1
[ -f "$man1/gpuscope.1" ] || bad "no gpuscope.1"
for c in $commands; do
  [ -f "$man1/gpuscope-$c.1" ] || bad "no man page for $c"
done
warnings=$(groff -man -Tutf8 -ww -z "$man1"/*.1 2>&1)
[ -z "$warnings" ] || bad "groff warns: $warnings"
grep -qF '\-\-allow\-skip' "$man1/gpuscope-check.1" || bad "gpuscope-check.1 lacks --allow-skip"

if ((failures)); then echo "shell_files: $failures failure(s)"; exit 1; fi
echo "shell_files: help, completions and man pages agree with the CLI"
