# shellcheck shell=bash
# Sourced by the install tests: `work`, a folder of their own removed on exit,
# and fail MESSAGE, which says what went wrong and ends the test.
#   source common.sh NAME      (NAME names the folder and prefixes the failure)
test_name=${1:?usage: source common.sh NAME}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-$test_name.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL ($test_name): $*" >&2
  exit 1
}
