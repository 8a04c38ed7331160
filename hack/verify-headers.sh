#!/usr/bin/env bash
# Fails when a tracked .go file does not start with the licence header in
# hack/boilerplate.go.txt. The header is the file's first lines, or follows a leading
# `//go:build` line and a blank line (where controller-gen puts it in zz_generated files).
#
# hack/verify-headers.sh --fix adds the header to the files that lack it.
set -euo pipefail
cd "$(dirname "$0")/.."
boilerplate=hack/boilerplate.go.txt
n=$(wc -l <"$boilerplate")
fix=false
[ "${1:-}" = "--fix" ] && fix=true

has_header() {
  local f=$1
  cmp -s <(head -n "$n" "$f") "$boilerplate" && return 0
  # A build constraint, a blank line, then the header.
  [[ "$(head -n 1 "$f")" == //go:build* ]] && [ -z "$(sed -n 2p "$f")" ] &&
    cmp -s <(sed -n "3,$((n + 2))p" "$f") "$boilerplate"
}

add_header() {
  local f=$1 tmp
  tmp=$(mktemp)
  if [[ "$(head -n 1 "$f")" == //go:build* ]]; then
    # Keep the constraint first, as Go requires it before the package clause's doc.
    { head -n 1 "$f"; echo; cat "$boilerplate"; echo; tail -n +2 "$f" | sed '1{/^$/d}'; } >"$tmp"
  else
    { cat "$boilerplate"; echo; cat "$f"; } >"$tmp"
  fi
  cat "$tmp" >"$f"
  rm -f "$tmp"
}

missing=()
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  has_header "$f" || missing+=("$f")
done < <(git ls-files -z -- '*.go')

if [ "${#missing[@]}" -eq 0 ]; then
  echo "every .go file carries the licence header"
  exit 0
fi
if $fix; then
  for f in "${missing[@]}"; do add_header "$f"; done
  echo "added the licence header to ${#missing[@]} files"
  exit 0
fi
echo "files without the licence header in $boilerplate (run hack/verify-headers.sh --fix):" >&2
printf '  %s\n' "${missing[@]}" >&2
exit 1
