#!/usr/bin/env bash
# Instructions one reserve_batch call executes, counted by valgrind's callgrind in a single-user
# Postgres backend: the same count every run whatever the machine is doing, so a change of 1% to
# the function shows as 1% (on this shared machine a clock, even a CPU clock, moves 5-15% between
# two runs of the same code). Measures the working tree's db/functions and, with --against REF,
# the same calls on REF's db/functions (git show), each from the same copy of one database.
#
#   bash scripts/bench/instructions.sh [--against HEAD~1] [--calls 200] [--batch 32] [--ceilings 3] [--budgets 0|1|2]
#                                      [--entry arrays|json] [--ids caller|db] [--phases]
#
# --phases (the typed entry only; not with --against): where a call's instructions go, phase by
# phase of reserve_batch_arrays (its comments "-- Phase N": the common batch's, which is what the
# calls here are; a batch it hands over runs decide_batch's phases): the working tree's functions with the
# function returning right before each phase, counted one after another, so each phase's share is
# the difference between two rows. A phase after an early return counts nothing, so a phase skipped
# by a batch (the decision's loop when the batch fits whole) shows as about 0. A call cut short
# writes no reservation and moves no counter, so the calls after it meet a smaller table than a
# whole run's: the rows approximate each phase's share. Some 40 s a phase.
#
# The database: the working tree's migrations, one endpoint with 1 or 3 ceilings (a global units
# ceiling; then a global calls ceiling and a per-caller units ceiling) and 0 to 2 budgets holding it
# (a global one; then a per-account one, as the bench's full shape), 300 batches made first so
# counters, accounts and reservations exist, then analyzed. Each call is a batch of --batch
# requests of amount 1, callers cycling over 50 accounts, compact answers: by default the library's
# call (reserve_batch_arrays, typed arrays, the reservations' ids made by the caller; --ids db leaves
# them to the database, as a REF from before contract version 12 must), with --entry json the JSON
# entry other languages call (reserve_batch; a REF from before contract version 11 has only that one).
# A call's count is (all - a backend that runs no call) / calls; its plans are made in the first
# call and counted in that share. Needs valgrind, the PostgreSQL server binaries (pg_config
# --bindir) and root (the server runs as the postgres user). Only function changes compare: REF's
# functions are created over the working tree's schema. Printed only.
set -euo pipefail
# A failure inside $(count ...) ends the script too, not only the substitution.
shopt -s inherit_errexit

against=""
calls=200
batch=32
ceilings=3
budgets=0
entry=arrays
ids=caller
phases=false
while [ $# -gt 0 ]; do
  case "$1" in
    --against) against=$2; shift 2 ;;
    --calls) calls=$2; shift 2; [[ "$calls" =~ ^[1-9][0-9]*$ ]] || { echo "--calls is a whole number from 1" >&2; exit 2; } ;;
    --batch) batch=$2; shift 2; [[ "$batch" =~ ^[1-9][0-9]*$ ]] || { echo "--batch is a whole number from 1" >&2; exit 2; } ;;
    --ceilings) ceilings=$2; shift 2; [[ "$ceilings" =~ ^[13]$ ]] || { echo "--ceilings is 1 or 3" >&2; exit 2; } ;;
    --budgets) budgets=$2; shift 2; [[ "$budgets" =~ ^[012]$ ]] || { echo "--budgets is 0, 1 or 2" >&2; exit 2; } ;;
    --phases) phases=true; shift ;;
    --entry) entry=$2; shift 2; [ "$entry" = arrays ] || [ "$entry" = json ] || { echo "--entry is arrays or json" >&2; exit 2; } ;;
    --ids) ids=$2; shift 2; [ "$ids" = caller ] || [ "$ids" = db ] || { echo "--ids is caller or db" >&2; exit 2; } ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if $phases && { [ -n "$against" ] || [ "$entry" != arrays ]; }; then echo "--phases counts the working tree's typed entry: not with --against or --entry json" >&2; exit 2; fi
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
bin=$(pg_config --bindir 2>/dev/null || ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
project=$(pwd)
work=$(mktemp -d /tmp/ceilings-instructions.XXXXXX)
chown postgres "$work"
port=$((20000 + RANDOM % 20000))
as_postgres() { runuser -u postgres -- "$@"; }
pg_start() { as_postgres "$bin/pg_ctl" -D "$work/data" -o "-p $port -k $work" -l "$work/log" start -w >/dev/null; }
pg_stop() { as_postgres "$bin/pg_ctl" -D "$work/data" stop -w >/dev/null; }
psql_cg() { psql -h 127.0.0.1 -p "$port" -U postgres -d cg -q -v ON_ERROR_STOP=1 "$@"; }
trap 'as_postgres "$bin/pg_ctl" -D "$work/data" stop -m immediate >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# Batch k's JSON, as one line of single-user input.
batches() {
  # The ids are the library's own (reservationIds): UUIDv7, each new row at the right edge of the
  # primary key.
  # The typed entry's arrays are the library's own (typedArrays), as callReserveBatch sends them.
  npx tsx -e '
    import { reservationIds, typedArrays } from "@/lib/enforcement/batcher";
    const [from, count, size] = process.argv.slice(1).map(Number);
    const literal = (value) => (value === null ? "NULL" : `${"\x27"}${value}${"\x27"}`);
    for (let k = from; k < from + count; k++) {
      const requests = Array.from({ length: size }, (_, j) => ({ endpoint: "bench.cpu", amount: 1, caller: `acct_${(k * size + j) % 50}` }));
      const a = process.env.ENTRY === "json" ? [] : typedArrays(requests).map(literal);
      // --ids db leaves the argument out, so a REF from before contract version 12 (no such argument) takes the call.
      const ids = process.env.IDS === "caller" ? `, ${literal(`{${reservationIds(size).join(",")}}`)}::uuid[]` : "";
      console.log(process.env.ENTRY === "json"
        ? `select ceilings.reserve_batch(${"\x27"}${JSON.stringify(requests)}${"\x27"}::jsonb, true) is not null;\n`
        : `select ceilings.reserve_batch_arrays(${a[0]}::text[], ${a[1]}::bigint[], ${a[2]}::text[], ${a[3]}::text[], ${a[4]}::text[], ` +
          `${a[5]}::text[], ${a[6]}::int[], ${a[7]}::text[], ${a[8]}::jsonb[], true, NULL${ids}) is not null;\n`);
    }' "$@"
}

as_postgres "$bin/initdb" -D "$work/data" -U postgres -A trust >/dev/null
pg_start
psql -h 127.0.0.1 -p "$port" -U postgres -q -c "create database cg"
DATABASE_URL="postgres://postgres@127.0.0.1:$port/cg" npx tsx scripts/migrate.ts >/dev/null 2>&1
psql_cg -c "insert into endpoints (key, name, unit, per_call_max) values ('bench.cpu', 'bench.cpu', 'units', 1000)"
psql_cg -c "insert into ceilings (endpoint_id, metric, scope, \"window\", value, max_value, default_value)
  select e.id, v.m::ceiling_metric, v.s::ceiling_scope, 'utc_day', 1e12, 1e12, 1e12 from endpoints e,
  (values (1, 'units', 'global'), (2, 'calls', 'global'), (3, 'units', 'caller')) v(o, m, s) where v.o <= $ceilings"
psql_cg -c "insert into budgets (key, name, scope, \"window\", value, max_value, default_value)
  select 'bench.' || v.s, 'bench ' || v.s, v.s::budget_scope, 'utc_day', 1e12, 1e12, 1e12
  from (values (1, 'global'), (2, 'account')) v(o, s) where v.o <= $budgets"
psql_cg -c "insert into budget_members (budget_id, endpoint_id) select b.id, e.id from budgets b, endpoints e"
ENTRY=json batches 0 300 "$batch" | grep -v '^$' | psql_cg >/dev/null
psql_cg -c "vacuum analyze"
pg_stop
cp -a "$work/data" "$work/snapshot"
ENTRY=$entry IDS=$ids batches 1000 "$calls" "$batch" > "$work/calls.sql"
: > "$work/none.sql"

# Instructions of a single-user backend running $2 on the functions in directory $1.
count() {
  rm -rf "$work/data" && cp -a "$work/snapshot" "$work/data"
  pg_start
  # As db:migrate applies them: every function dropped first, so a signature the other side
  # changed leaves no second overload behind.
  psql_cg -c "DO \$\$ DECLARE f regprocedure; BEGIN FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'ceilings' LOOP EXECUTE 'DROP FUNCTION ' || f; END LOOP; END \$\$"
  { echo "SET check_function_bodies = off;"; cat "$1"/*.sql; } | psql_cg >/dev/null
  pg_stop
  as_postgres valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
    "$bin/postgres" --single -D "$work/data" -j cg < "$2" > "$work/single.log" 2> "$work/valgrind.log"
  # A failed call is counted as a short one: the backend prints its error on stdout or stderr.
  if grep -qE '(ERROR|FATAL):' "$work/single.log" "$work/valgrind.log"; then grep -hE -m1 '(ERROR|FATAL):' "$work/single.log" "$work/valgrind.log" >&2; exit 1; fi
  if [ -n "${KEEP_CALLGRIND:-}" ]; then cp "$work/callgrind.out" "$KEEP_CALLGRIND.$(basename "$2" .sql)"; fi
  grep -E '^(summary|totals):' "$work/callgrind.out" | head -1 | awk '{print $2}'
}

# One row: its label and a call's instructions (a request's: divided by the batch).
report() { printf '%-28s %12d instructions a call, %8d a request\n' "$1" "$2" $(($2 / batch)); }

measure() {
  local label=$1 dir=$2 none all
  none=$(count "$dir" "$work/none.sql")
  all=$(count "$dir" "$work/calls.sql")
  [[ "$none" =~ ^[0-9]+$ && "$all" =~ ^[0-9]+$ ]] || { echo "no instruction count ($label): none '$none', all '$all'" >&2; exit 1; }
  report "$label" $(((all - none) / calls))
}

echo "reserve_batch ($entry), $batch requests a call on $ceilings ceiling(s) and $budgets budget(s), $calls calls, callgrind"
if $phases; then
  none=$(count "$project/db/functions" "$work/none.sql")
  before=0
  for stop in $(grep -oE '^  -- Phase [0-9]+[a-z]?' "$project/db/functions/reserve_batch_arrays.sql" | awk '{print $3}') end; do
    mkdir "$work/phase-$stop"
    cp "$project"/db/functions/*.sql "$work/phase-$stop/"
    if [ "$stop" != end ]; then
      # The first line of the phase's comment gets a return before it (the only one in the file).
      sed -i -E "0,/^  -- Phase $stop\b/s//  RETURN NULL;\n&/" "$work/phase-$stop/reserve_batch_arrays.sql"
      grep -qE '^  RETURN NULL;$' "$work/phase-$stop/reserve_batch_arrays.sql" || { echo "phase $stop not found" >&2; exit 1; }
    fi
    all=$(count "$work/phase-$stop" "$work/calls.sql")
    at=$(((all - none) / calls))
    if [ "$stop" = end ]; then label="phase $last, to the answer"; elif [ "$before" = 0 ]; then label="before phase $stop"; else label="phase $last"; fi
    report "$label" $((at - before))
    before=$at
    last=$stop
  done
  report "whole call" "$before"
  exit 0
fi
measure "working tree" "$project/db/functions"
if [ -n "$against" ]; then
  mkdir "$work/against"
  for f in $(git ls-tree --name-only "$against" db/functions/ | grep '\.sql$'); do git show "$against:$f" > "$work/against/$(basename "$f")"; done
  measure "$against" "$work/against"
fi
