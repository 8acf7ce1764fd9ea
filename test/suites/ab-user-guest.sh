#!/bin/bash
# test/suites/ab-user-guest.sh - tools/ab-run on a guest of the user's own
# (not test/lab/xl-guest's) and with Xen's counters off, as on a stock Xen
# built without CONFIG_PERF_COUNTERS.
#
# Usage (inside the lab's Dom0, from the clone's root, as root, with memory
# for a guest):
#   test/lab/run --guest-mem 512 --timeout 2400 -- bash test/suites/ab-user-guest.sh
#
# Starts the toolstack's daemons (test/lab/xl-guest up: what xencommons
# does on a real Dom0), then a PV guest the way a user would: its own xl
# config file, written here, and `xl create` (the lab's guest kernel and
# initramfs, $XPS_GUEST_KERNEL and $XPS_GUEST_INITRD, whose workload keeps
# checking a memory pattern: ab-run does not know that, this suite uses it
# to check the guest's memory at the end).  Checks:
#   guest-create             xl create; the guest's workload filled its memory
#   refuse-no-confirmation   ab-run --bench save --guest G without
#                            --yes-downtime exits 2 with one line naming
#                            --yes-downtime and the downtime; the guest is
#                            untouched (same domain, still running)
#   refuse-hvm               with `xl list -l` saying the guest is HVM (a
#                            wrapper in front of xl) ab-run exits 2 with
#                            one line saying PV only; guest untouched
#   refuse-migrate-host      --migrate-host to a host that does not resolve:
#                            exit 2 before anything runs; guest untouched
#   save-table, migrate-table  ab-run --bench save / migrate --guest G
#                            --yes-downtime --no-xen-counters, 1 round
#                            (save: unloaded and batched; migrate, 76 s a
#                            run here: batched only): exit 0; the table has
#                            the time and the module's counter columns and
#                            no ptwr, mmu_update or hcalls column; the line
#                            saying why those are missing; the line saying
#                            there is no memory-pattern check; the line
#                            saying the guest runs; CSV rows of the
#                            variants, each with a time and empty Xen counts
#   save-upr                 save ran with bpftrace (auto: no Xen counters):
#                            an upr ms column and upr_calls >= 1 in every
#                            row (xl and libxl-save-helper unmap the
#                            guest's memory)
#   migrate-upr-off          migrate ran with --bpftrace off: the line
#                            saying so, no upr ms column
#   guest-running-after-save, guest-running-after-migrate  xl list: the
#                            guest runs after each ab-run
#   madv-no-counters         ab-run --bench madv, 16 MiB, unloaded,
#                            batched, noswap, --no-xen-counters: the same
#                            table checks; issue 5's ptwr targets n/a,
#                            never a figure; upr_calls >= 1 for each row
#   guest-memory-intact      the guest's own pattern check passes after all
#                            of it (test/lab/xl-guest wait-check)
#   kernel-log, end/xen-console-clean  as in every suite
# The outputs (ab-run's stdout, stderr, CSVs) are copied to the lab run's
# folder (/xps-lab/ab-user-guest/, on the host under $XPS_CACHE/runs/).
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes, "N
# passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_GUEST_MIB (128: --guest-mem 512 holds two copies for
# the migration to this Dom0).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-ab-user-guest
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
XLG=$REPO/test/lab/xl-guest
AB=$REPO/tools/ab-run
G=userguest
MIB=${XPS_GUEST_MIB:-128}
LOG=/var/log/xen/console/guest-$G.log

start_suite
BIN=$(xps_correctness_bin) || BIN=
[ -n "$BIN" ] && [ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1
t_suite=$SECONDS

# state: "DOMID STATE" of the guest from xl list, empty if there is none.
state() { xl list "$G" 2>/dev/null | awk 'NR == 2 { print $2, $5 }'; }
# running: the guest exists and is neither paused, shut down, crashed
# nor dying (r and b, running and blocked, come and go).
running() { local s; s=$(state); [ -n "$s" ] && [[ ${s#* } != *[pscd]* ]]; }

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() { xl destroy "$G" >/dev/null 2>&1; }
trap cleanup EXIT

# --- a guest of the user's own ------------------------------------------
t0=$SECONDS
if [ ! -r "${XPS_GUEST_KERNEL:-}" ] || [ ! -r "${XPS_GUEST_INITRD:-}" ]; then
	fail guest-create "no guest kernel/initramfs (\$XPS_GUEST_KERNEL='${XPS_GUEST_KERNEL:-}', \$XPS_GUEST_INITRD='${XPS_GUEST_INITRD:-}'): run under test/lab/run --guest-mem"
	finish
fi
if ! out=$("$XLG" up 2>&1); then
	fail guest-create "the toolstack's daemons did not start: $out"
	finish
fi
cat >"$WORK/$G.cfg" <<CFG
# A user's PV guest, as in xl.cfg(5).
name = "$G"
type = "pv"
kernel = "$XPS_GUEST_KERNEL"
ramdisk = "$XPS_GUEST_INITRD"
extra = "console=hvc0 loglevel=4 xps_mem=48"
memory = $MIB
vcpus = 1
on_crash = "preserve"
CFG
rm -f "$LOG" "/var/log/xen/console/guest-$G--incoming.log"
if ! xl create -q "$WORK/$G.cfg" >"$WORK/create.out" 2>&1; then
	fail guest-create "xl create: $(tail -n 3 "$WORK/create.out" | tr '\n' ' ')"
	finish
fi
for _ in $(seq 600); do
	grep -q 'XPS-GUEST: filled' "$LOG" 2>/dev/null && break
	running || break
	sleep 1
done
if grep -q 'XPS-GUEST: filled' "$LOG" 2>/dev/null; then
	pass guest-create
	note "guest $G ($(state), $MIB MiB) up and filled after $((SECONDS - t0)) s"
else
	fail guest-create "not filled after $((SECONDS - t0)) s (xl list: '$(state)'); console: $(tail -n 3 "$LOG" 2>/dev/null | tr '\n' ' ')"
	finish
fi

# --- refusals: nothing touched ------------------------------------------
# refused CHECK WANT ARGS...: ab-run ARGS exits 2 with one stderr line
# matching the extended regex WANT, and the guest keeps its domain (a
# save and restore or a migration would have given it a new domid) and
# runs.
refused() {
	local check=$1 want=$2 before rc lines
	shift 2
	before=$(xl domid "$G" 2>/dev/null)
	"$AB" "$@" >"$WORK/$check.out" 2>"$WORK/$check.err"
	rc=$?
	lines=$(wc -l <"$WORK/$check.err")
	if [ "$rc" != 2 ]; then
		fail "$check" "exit $rc, expected 2: $(tail -n 3 "$WORK/$check.err" | tr '\n' ' ')"
	elif [ "$lines" != 1 ] || ! grep -qE -- "$want" "$WORK/$check.err"; then
		fail "$check" "expected one line matching '$want', got $lines: $(head -c 400 "$WORK/$check.err")"
	elif [ "$(xl domid "$G" 2>/dev/null)" != "$before" ] || ! running; then
		fail "$check" "the guest changed: domain $before before, '$(state)' (domain, state) after"
	else
		pass "$check"
		note "$check: $(cat "$WORK/$check.err")"
	fi
}
refused refuse-no-confirmation '--yes-downtime.*downtime.*twice its memory' \
	--bench save --guest "$G" --rounds 1 --warmup 0
mkdir -p "$WORK/fakebin"
cat >"$WORK/fakebin/xl" <<FAKE
#!/bin/bash
# xl, except that list -l calls every domain HVM.
if [ "\$1" = list ] && [ "\${2:-}" = -l ]; then
	$(command -v xl) "\$@" | sed -E 's/("type": *)"pv"/\1"hvm"/'
	exit "\${PIPESTATUS[0]}"
fi
exec $(command -v xl) "\$@"
FAKE
chmod +x "$WORK/fakebin/xl"
PATH=$WORK/fakebin:$PATH refused refuse-hvm 'is HVM, not PV.*PV guests only' \
	--bench save --guest "$G" --yes-downtime --rounds 1 --warmup 0
refused refuse-migrate-host 'migrate-host' \
	--bench migrate --guest "$G" --yes-downtime --migrate-host no-such-host.invalid \
	--rounds 1 --warmup 0

# --- the runs -------------------------------------------------------------
# table_checks CHECK OUT: the table in OUT has the time and the module's
# columns, none of Xen's counters, and the line saying why.
table_checks() {
	local check=$1 out=$2 hdr
	hdr=$(grep -m1 '^variant ' "$out")
	if [ -z "$hdr" ]; then
		fail "$check" "no table: $(head -c 300 "$out")"
	elif [[ $hdr != *"median ms"* || $hdr != *"deferred/1k"* || $hdr != *"sync/1k"* ]]; then
		fail "$check" "header lacks median ms or the module's columns: $hdr"
	elif [[ $hdr == *ptwr* || $hdr == *mmu_update* || $hdr == *hcalls* ]]; then
		fail "$check" "header has a column of Xen's counters: $hdr"
	elif ! grep -qF "ptwr/1k PTE, mmu_update/1k, hcalls/1k columns not shown: Xen's counters switched off (--no-xen-counters)" "$out"; then
		fail "$check" "no line saying why Xen's counters are missing: $(grep 'not shown' "$out" | tr '\n' '|')"
	else
		return 0
	fi
	return 1
}

# csv_checks CHECK CSV VARIANTS: one row per variant, each with a time
# in ms and an empty ptwr (not measured, not 0).
csv_checks() {
	local check=$1 csv=$2 want=$3 got bad
	got=$(awk -F, 'NR > 1 { print $2 }' "$csv" 2>/dev/null | sort | tr '\n' ' ')
	bad=$(awk -F, '{ sub(/\r$/, "") } NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["ms"] !~ /^[0-9.]+$/ || $c["ptwr"] != "" || $c["mmu_update_calls"] != "" {
			print $c["variant"] " ms=" $c["ms"] " ptwr=" $c["ptwr"] }' "$csv" 2>/dev/null)
	if [ "$got" != "$want" ]; then
		fail "$check" "CSV variants '$got', expected '$want'"
	elif [ -n "$bad" ]; then
		fail "$check" "CSV rows with no time or with a Xen counter: $bad"
	else
		return 0
	fi
	return 1
}

# upr_checks CHECK OUT CSV: an upr ms column, upr_calls >= 1 in every row.
upr_checks() {
	local check=$1 out=$2 csv=$3 bad
	if ! command -v bpftrace >/dev/null; then
		if grep -qF 'upr ms column not shown: bpftrace not found' "$out"; then
			pass "$check"
			note "$check: no bpftrace in Dom0: its column is missing and says so"
		else
			fail "$check" "no bpftrace and no line saying so"
		fi
		return
	fi
	bad=$(awk -F, '{ sub(/\r$/, "") } NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		!($c["upr_calls"] >= 1) { print $c["variant"] " upr_calls=" $c["upr_calls"] }' "$csv")
	if ! grep -m1 '^variant ' "$out" | grep -q 'upr ms'; then
		fail "$check" "no upr ms column: $(grep 'upr ms' "$out")"
	elif [ -n "$bad" ]; then
		fail "$check" "rows without an unmap_page_range() call: $bad"
	else
		pass "$check"
		note "$check: $(awk -F, '{ sub(/\r$/, "") } NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			{ printf "%s %s ms in %s calls; ", $c["variant"], $c["upr_ms"], $c["upr_calls"] }' "$csv")"
	fi
}

# guest_run CHECK BENCH VARIANTS ARGS...: ab-run --bench BENCH on the
# ab_run CHECK BENCH ARG...: tools/ab-run --bench BENCH ARG... into
# $WORK/BENCH.{out,err}, its table and progress lines shown as notes;
# sets rc to its exit status.
ab_run() {
	local check=$1 bench=$2 t=$SECONDS
	shift 2
	"$AB" --bench "$bench" "$@" >"$WORK/$bench.out" 2>"$WORK/$bench.err"
	rc=$?
	note "$check: ab-run took $((SECONDS - t)) s"
	sed "s/^/# $bench: /" "$WORK/$bench.out"
	grep -E '^ab-run: (bpftrace|round)' "$WORK/$bench.err" | sed "s/^/# $bench: /"
}

# guest, 1 round of VARIANTS, counters off; its table checked.
guest_run() {
	local check=$1 bench=$2 variants=$3 rc
	shift 3
	ab_run "$check" "$bench" --guest "$G" --yes-downtime --no-xen-counters \
		--variants "$variants" --rounds 1 --warmup 0 \
		--csv "$WORK/ab/$bench.csv" --png none "$@"
	if [ "$rc" != 0 ]; then
		fail "$check" "exit $rc: $(tail -n 4 "$WORK/$bench.err" | tr '\n' ' ')"
	elif table_checks "$check" "$WORK/$bench.out" &&
		csv_checks "$check" "$WORK/ab/$bench.csv" "$(echo "$variants" | tr , '\n' | sort | tr '\n' ' ')"; then
		if ! grep -q "^note: guest $G is not the lab's test guest: no memory-pattern check" "$WORK/$bench.out"; then
			fail "$check" "no line saying there is no memory-pattern check"
		elif ! grep -q "^guest $G runs (domain [0-9]*, state [^ ]*) after the run" "$WORK/$bench.out"; then
			fail "$check" "no line saying the guest runs"
		else
			pass "$check"
		fi
	fi
	if running; then
		pass "guest-running-after-$bench"
	else
		fail "guest-running-after-$bench" "xl list: '$(state)'; $(tail -n 3 "$WORK/$bench.err" | tr '\n' ' ')"
	fi
}

guest_run save-table save unloaded,batched
[ -f "$WORK/ab/save.csv" ] && upr_checks save-upr "$WORK/save.out" "$WORK/ab/save.csv"
guest_run migrate-table migrate batched --bpftrace off
if grep -qF 'upr ms column not shown: bpftrace off (--bpftrace off)' "$WORK/migrate.out" &&
	! grep -m1 '^variant ' "$WORK/migrate.out" | grep -q 'upr ms'; then
	pass migrate-upr-off
else
	fail migrate-upr-off "no line saying the upr ms column is off: $(grep 'upr ms' "$WORK/migrate.out")"
fi

# --- MADV_DONTNEED with Xen's counters off ----------------------------------
ab_run madv-no-counters madv --size 16M --rounds 1 --warmup 0 --no-xen-counters \
	--variants unloaded,batched,noswap --csv "$WORK/ab/madv.csv" --png none
if [ "$rc" != 0 ]; then
	fail madv-no-counters "exit $rc: $(tail -n 4 "$WORK/madv.err" | tr '\n' ' ')"
elif table_checks madv-no-counters "$WORK/madv.out" &&
	csv_checks madv-no-counters "$WORK/ab/madv.csv" "batched noswap unloaded "; then
	if grep -E 'ptwr emulations per 1000 PTEs.*: [0-9]' "$WORK/madv.out" | grep -q .; then
		fail madv-no-counters "a ptwr target shows a figure: $(grep 'ptwr emulations' "$WORK/madv.out" | tr '\n' '|')"
	elif ! grep -q '\[n/a    \] ptwr emulations per 1000 PTEs' "$WORK/madv.out"; then
		fail madv-no-counters "the ptwr targets are not n/a: $(grep 'ptwr' "$WORK/madv.out" | tr '\n' '|')"
	else
		pass madv-no-counters
	fi
fi
[ -f "$WORK/ab/madv.csv" ] && upr_checks madv-upr "$WORK/madv.out" "$WORK/ab/madv.csv"

# --- the guest, by its own check ---------------------------------------------
if out=$("$XLG" wait-check "$G" 600 2>&1); then
	pass guest-memory-intact
else
	fail guest-memory-intact "$out"
fi

xl destroy "$G" >/dev/null 2>&1
end_checks "$KLOG"
[ -d /xps-lab ] && cp -r "$WORK" /xps-lab/ab-user-guest 2>/dev/null
note "ab-user-guest suite: $((SECONDS - t_suite)) s"
finish
