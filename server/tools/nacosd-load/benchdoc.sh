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

# wrk_scripts ROOT FILE: the directory of ../shared/bench/wrk's Lua scripts
# (NACOSD_WRK_SCRIPTS, else ROOT/../shared/bench/wrk, else /work/shared/bench/wrk)
# that holds FILE; exits 3 when there is none.
wrk_scripts() {
  local c
  for c in "${NACOSD_WRK_SCRIPTS:-}" "$1/../shared/bench/wrk" /work/shared/bench/wrk; do
    [[ -n "$c" && -f "$c/$2" ]] && { echo "$c"; return 0; }
  done
  echo "no wrk Lua scripts with $2 (set NACOSD_WRK_SCRIPTS)" >&2
  exit 3
}

# ensure_wrk: installs wrk (Debian package) when missing.
ensure_wrk() {
  command -v wrk >/dev/null && return 0
  echo "installing wrk (Debian package)" >&2
  apt-get install -y -qq wrk </dev/null >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk </dev/null >/dev/null; }
}

# stop_server [SIGNAL]: stops the server whose pid is in $pid (SIGTERM by
# default; kill -9 after 30 s) and clears pid.
stop_server() {
  [[ -n "${pid:-}" ]] || return 0
  kill -"${1:-TERM}" "$pid" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

# start_nacosd PORT DIR: starts bin/nacosd on 127.0.0.1:PORT (raft PORT-1000)
# with data directory DIR/data, logging to DIR/out.log; sets pid and
# started_ms (exec to the first readiness 200); exits if it never answers.
start_nacosd() {
  local port=$1 dir=$2 t0
  t0=$(date +%s%N)
  ./bin/nacosd -port "$port" -host 127.0.0.1 -ip 127.0.0.1 -data-dir "$dir/data" \
    -raft-addr 127.0.0.1:$((port - 1000)) -log-level warn >>"$dir/out.log" 2>&1 &
  pid=$!
  started_ms=$(./bin/nacosd-scale wait -url "http://127.0.0.1:$port/nacos/v1/console/health/readiness" -since "$t0") ||
    { echo "nacosd did not answer; log:" >&2; tail -20 "$dir/out.log" >&2; exit 1; }
}
