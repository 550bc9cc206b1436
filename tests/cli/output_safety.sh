#!/usr/bin/env bash
# No command destroys a trace or leaves a temporary file behind:
#  1. every command that writes a file refuses (exit 2, input untouched) when
#     its output is one of its inputs — by the same name, by another path to
#     it, and through a symbolic link;
#  2. SIGTERM, SIGHUP, SIGINT and SIGPIPE during a large export (SQLite: a
#     named temporary; .json.gz: an unnamed one) and a large import end the
#     command with the signal's status (or it finished first) and leave no
#     temporary; after a SIGKILL the next export to that name removes it;
#  3. a FIFO as input is read as a stream, and one nobody writes to is an
#     error, not a hang.
#   output_safety.sh GPUSCOPE WORKDIR [GPUSCOPE_VIEW]
set -uo pipefail
gs=${1:?usage: output_safety.sh GPUSCOPE WORKDIR [GPUSCOPE_VIEW]}
work=${2:?}
view=${3:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$gs" synth --kernels 20000 -o t.gscope >/dev/null || { echo "synth failed"; exit 1; }
"$gs" synth --kernels 20000 --preset report -o u.gscope >/dev/null
"$gs" synth --kernels 20000 -o t.json >/dev/null
mkdir -p sub && ln -sf "$PWD/t.gscope" link.gscope && ln -sf "$PWD/t.json" link.json
sum() { md5sum "$1" | cut -d' ' -f1; }
before_t=$(sum t.gscope) before_j=$(sum t.json)

refused() {  # DESCRIPTION COMMAND...
  local what=$1
  shift
  out=$("$gs" "$@" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || bad "$what: exit $rc, want 2 ($out)"
  case $out in *"refusing to overwrite"*) ;; *) bad "$what: no clear message: $out" ;; esac
}
for o in t.gscope ./sub/../t.gscope "$PWD/t.gscope" link.gscope; do
  refused "report -o $o" report t.gscope -o "$o"
  refused "report --json -o $o" report --json t.gscope u.gscope -o "$o"
  refused "export chrome -o $o" export t.gscope -o "$o" --format chrome
  refused "export sqlite -o $o" export t.gscope -o "$o" --format sqlite
  refused "diff -o $o (before)" diff t.gscope u.gscope -o "$o"
  refused "diff -o $o (after)" diff u.gscope t.gscope -o "$o"
done
if [ -n "$view" ]; then  # refused before any window opens: no display needed
  for o in t.gscope link.gscope; do
    out=$("$view" t.gscope --screenshot "$o" 2>&1)
    rc=$?
    [ $rc -eq 2 ] || bad "gpuscope-view --screenshot $o: exit $rc, want 2 ($out)"
    case $out in *"refusing to overwrite"*) ;; *) bad "gpuscope-view --screenshot $o: unclear: $out" ;; esac
  done
fi
for o in t.json ./sub/../t.json link.json; do
  refused "import -o $o" import t.json -o "$o"
done
[ "$(sum t.gscope)" = "$before_t" ] || bad "t.gscope changed"
[ "$(sum t.json)" = "$before_j" ] || bad "t.json changed"

# ---- signals -------------------------------------------------------------------------------
"$gs" synth --kernels 1500000 -o big.gscope >/dev/null
"$gs" synth --kernels 300000 -o big.json.gz >/dev/null
leftovers() { ls -a | grep -E '\.tmp\.[0-9]+$'; }
for sig in TERM HUP INT PIPE; do
  for job in "export big.gscope -o x.sqlite" "export big.gscope -o x.json.gz" "import big.json.gz -o x.gscope"; do
    # shellcheck disable=SC2086
    "$gs" $job >/dev/null 2>&1 &
    pid=$!
    sleep 0.4
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    want=$((128 + $(kill -l "$sig")))
    [ $rc -eq $want ] || [ $rc -eq 0 ] || bad "$job, SIG$sig: exit $rc, want $want (or 0 when it finished first)"
    left=$(leftovers)
    [ -z "$left" ] || bad "$job, SIG$sig left: $left"
    rm -f x.sqlite x.json.gz x.gscope
  done
done
"$gs" export big.gscope -o x.sqlite >/dev/null 2>&1 &
pid=$!
sleep 0.4
kill -KILL "$pid" 2>/dev/null
wait "$pid"
"$gs" export t.gscope -o x.sqlite >/dev/null || bad "export after a SIGKILL failed"
left=$(leftovers)
[ -z "$left" ] || bad "the export after a SIGKILL did not remove: $left"

# ---- pipes ---------------------------------------------------------------------------------
"$gs" info <(cat t.gscope) >info.txt 2>&1 || bad "info <(cat t.gscope): $(cat info.txt)"
grep -q "synthetic" info.txt || bad "info of a process substitution does not describe the trace"
"$gs" report <(gzip -c t.json) >/dev/null 2>&1 || bad "report <(gzip -c t.json) failed"
mkfifo silent
out=$(timeout 60 "$gs" info silent 2>&1)
rc=$?
[ $rc -eq 2 ] || bad "info on a FIFO nobody writes to: exit $rc, want 2 ($out)"
case $out in *silent*"nothing arrived"*) ;; *) bad "info on a silent FIFO: unclear message: $out" ;; esac

if ((failures)); then echo "output_safety: $failures failure(s)"; exit 1; fi
echo "output_safety: all checks passed"
