#!/usr/bin/env bash
# The tree speaks of the product, not of how it is being made: no planning
# numbers, no numbered working sittings, no who-ran-what. (The pattern's
# bracketed first letters keep this file from matching itself.)
#   project_words.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: project_words.sh SOURCE_DIR}"
pattern='\b([i]ssue|[t]icket) [0-9]+|\b[s]ession [0-9]+|\b(the [l]ead|sub-?[a]gents?|[d]evice tool)\b'
if hits=$(git grep -nIiE "$pattern" -- . ':!tests/data' ':!tests/house/project_words.sh' 2>/dev/null); then
  echo "FAIL: these lines speak of the project's making, not of the product:"
  printf '%s\n' "$hits" | cut -c1-200
  exit 1
fi
echo "project_words: clean"
