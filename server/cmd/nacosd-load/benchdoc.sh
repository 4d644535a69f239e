# Helpers for the scripts that write sections of docs/benchmarks.md
# (sourced by wrk.sh and ../nacosd-scale/scale.sh).

# machine_line: date, CPUs, CPU model, kernel and load average, one sentence.
machine_line() {
  local cpu
  cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs ($cpu), Linux $(uname -r), $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo); load average (1/5/15 min) at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# replace_section DOC TITLE FILE: FILE (which starts with "## TITLE")
# replaces the section "## TITLE" of DOC up to the next "## " heading, or
# is appended when DOC has no such section; nothing else changes.
replace_section() {
  local doc=$1 title=$2 file=$3 tmp
  tmp=$(mktemp)
  awk -v f="$file" -v start="## $title" '
    $0 == start { while ((getline l < f) > 0) print l; done = 1; skip = 1; next }
    skip && /^## / { skip = 0 }
    !skip { print }
    END { if (!done) { print ""; while ((getline l < f) > 0) print l } }' "$doc" >"$tmp"
  cp "$tmp" "$doc"
  rm -f "$tmp"
}

# wait_load: the machine is shared; wait up to a minute for load <= 2
# (NACOSD_BENCH_WAIT_ROUNDS 5-second rounds, default 12; 0 = do not wait).
wait_load() {
  local i
  for i in $(seq "${NACOSD_BENCH_WAIT_ROUNDS:-12}"); do
    awk -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN { exit !(l > 2) }' || return 0
    echo "load $(cut -d' ' -f1 /proc/loadavg) > 2, waiting ($i/${NACOSD_BENCH_WAIT_ROUNDS:-12})" >&2
    sleep 5
  done
}
