#!/usr/bin/env bash
# The tree speaks of the product, not of how it is being made: no planning
# numbers ("issue 12"), no working sittings ("session 3"), no who-ran-what.
#   project_words.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: project_words.sh SOURCE_DIR}"
pattern='\b(issue|ticket) [0-9]+|\bsession [0-9]+|\b(the lead|sub-?agents?|device tool)\b'
if hits=$(git grep -nIiE "$pattern" -- . ':!tests/data' ':!tests/house/project_words.sh' 2>/dev/null); then
  echo "FAIL: these lines speak of the project's making, not of the product:"
  printf '%s\n' "$hits" | cut -c1-200
  exit 1
fi
echo "project_words: clean"
