#!/usr/bin/env bash
# Fails when the repository tracks a binary file other than a picture: a
# built executable (ELF, Mach-O, PE), an archive, an object file. Git's
# own test decides what is binary (`git ls-files --eol`: i/-text, a NUL in
# the first 8000 bytes); the pictures of docs/ are allowed when their
# first bytes say they are pictures. Run by `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS=$'\t' read -r info path; do
  [[ "${info%% *}" == "i/-text" ]] || continue
  magic=$(head -c 8 -- "$path" | od -An -tx1 | tr -d ' \n')
  case "$path:$magic" in
    *.png:89504e470d0a1a0a) continue ;;
    *.jpg:ffd8ff* | *.jpeg:ffd8ff*) continue ;;
    *.gif:47494638*) continue ;;
    *.ico:00000100*) continue ;;
    *.webp:52494646*) continue ;;
  esac
  kind=binary
  case "$magic" in
    7f454c46*) kind="ELF executable" ;;
    cffaedfe* | cefaedfe* | feedfacf* | feedface*) kind="Mach-O executable" ;;
    4d5a*) kind="PE executable" ;;
    504b0304*) kind="zip archive" ;;
    1f8b*) kind="gzip archive" ;;
  esac
  size=$(wc -c <"$path")
  echo "no-binaries: $path is a committed $kind ($size bytes): remove it (git rm --cached) and ignore it (.gitignore)" >&2
  bad=1
done < <(git ls-files --eol)
exit "$bad"
