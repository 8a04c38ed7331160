#!/usr/bin/env bash
# Fails when the repository tracks an executable that is not a script, or a file over
# 1 MB that is not on the allow-list below: built binaries belong in bin/ (ignored),
# never in git.
set -euo pipefail
cd "$(dirname "$0")/.."
max=$((1024 * 1024))
# Files allowed above the size limit, one path a line.
allow=(
)
status=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  if [ -x "$f" ]; then
    case "$(head -c 2 "$f")" in
      '#!') ;;
      *) echo "tracked executable that is not a script: $f (remove it with git rm --cached)" >&2; status=1 ;;
    esac
  fi
  size=$(stat -c %s "$f")
  if [ "$size" -gt "$max" ]; then
    allowed=false
    for a in "${allow[@]}"; do [ "$a" = "$f" ] && allowed=true; done
    $allowed || { echo "tracked file over 1 MB: $f ($size bytes); add it to the allow-list in hack/verify-repo.sh if it must be in git" >&2; status=1; }
  fi
done < <(git ls-files -z)
[ "$status" -eq 0 ] && echo "no tracked binaries or large files"
exit "$status"
