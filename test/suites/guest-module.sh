#!/bin/bash
# test/suites/guest-module.sh - xen_ptswap inside a PV DomU that is live
# migrated while it runs the correctness programs.
#
# Usage (inside the lab's Dom0, from the clone's root, as root, with memory
# for a guest and its migration copy):
#   test/lab/run --guest-mem 768 -- bash test/suites/guest-module.sh
#   test/lab/run --guest-mem 768 --xen-append pv-l1tf=domu=true -- \
#       bash test/suites/guest-module.sh
#
# Starts a 256 MiB, 2-vCPU PV guest (test/lab/xl-guest create) whose
# initramfs gets a second tree: this boot's xen_ptswap.ko ($XPS_MODULE:
# the guest kernel is Dom0's), the correctness programs built on the host
# ($XPS_CORRECTNESS_BIN), test/suites/correctness.sh and lib.sh, the
# host's bash, losetup and mkfs.ext4, and the shared libraries ldd names
# for all of them.  The guest's /init (test/lab/guest/init,
# xps_correctness=batched) keeps its memory pattern workload running (a
# smaller one, xps_mem=, to leave room for the programs) and runs
# correctness.sh batched once, on its console.  Meanwhile Dom0 (the module
# loaded there too, mode=batched) live-migrates the guest to itself, back
# to back (tools/guest-bench migrate: xl migrate -s, then a full check of
# the guest's pattern), until the guest's run is over or
# $XPS_GUEST_MIGRATIONS migrations have been done.  A PV guest
# being migrated runs in shadow log-dirty mode, so its MMU_PT_UPDATE_SWAP
# goes through paging_cmpxchg_guest_entry().
#
# Not run in the guest (XPS_CORRECTNESS_SKIP): foreign (it finds the
# machine frames of its own buffer by a scan and maps them by MFN: every
# migration gives the guest new machine frames, and only Dom0 may map
# others' frames), xen_console (XEN_SYSCTL_readconsole is Dom0's: Dom0
# runs it here), stress (stress-ng and its libraries, 33 MB, do not fit
# beside the workload in the guest), and always gntdev_lock (Dom0's
# /dev/xen/gntdev lock order; in a DomU every map balloons a page out and
# back).  xen_pt_owner (another domain's page tables) is guest.sh's, run
# from Dom0.
#
# Checks:
#   guest-create                 the guest came up with the tree, filled
#                                its pattern
#   guest-round-start            the guest started the correctness run
#   guest-skips-as-asked         the guest's run skipped exactly the
#                                programs named in xps_skip= (no more)
#   migrate-during-programs      at least one live migration started
#                                while the guest's programs ran and either
#                                ended before they did or had a whole
#                                program inside it (two finished between
#                                its start and its end); every one of them
#                                worked and was followed by a complete,
#                                good check of the guest's pattern
#   guest/<check>                every check of correctness.sh in the guest
#                                (its programs, the per-program kernel log
#                                of the guest, the module's counters there:
#                                consistent, deferred and swapped > 0, no
#                                failed hypercall)
#   save-restore-with-module     after the run, with the module still
#                                loaded in Dom0 and the guest: xl save,
#                                xl restore (tools/guest-bench save), then
#                                a complete, good check of the pattern
#   guest-mem-intact             the pattern's check after the run passes
#   guest-console-clean          no kernel trouble ($BAD_LOG, panic) on the
#                                guest's console
#   log-dirty-shadowed           Xen's shadow code ran during the
#                                migrations ("calls to shadow_fault")
#   pv-l1tf-domu-forced          (only with pv-l1tf= on Xen's command line)
#                                Xen says PV L1TF shadowing is on for
#                                DomUs; "# L1TF" notes say whether it
#                                engaged ("L1TF-vulnerable ... Shadowing"
#                                in Xen's log, shadow faults before any
#                                migration)
#   no-domain-left-dying         within 60 s of the guest's destroy, xl
#                                lists no domain but Dom0: a destroyed
#                                domain whose page Xen still holds a
#                                reference to (such as one an mmu_update
#                                kept, test/xen-patch/ 0006) stays dying
#                                for ever, as "(null)"; the migrations'
#                                source domains are in the same list
#   kernel-log                   nothing in Dom0's kernel log (BAD_LOG)
#   end/xen-console-clean        nothing in Xen's console ring
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes, "N
# passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_GUEST_MIB (256), XPS_GUEST_WORKLOAD_MIB (64: the
# guest's pattern), XPS_GUEST_ROUND_TIMEOUT (1800 s for the guest's run),
# XPS_GUEST_MIGRATIONS (at most 3 migrations: each one slows the guest's
# programs, and they dirty its memory, which makes the next one slower),
# XPS_GUEST_RACE_ROUNDS (shmem_race's rounds in the guest, 16; Dom0's
# default is 48), XPS_GUEST_PROG_TIMEOUT (the hang guard per program in
# the guest, 1200 s, the guest's XPS_PROG_TIMEOUT: while its page tables
# are shadowed for a migration and another lab boot shares the host, a
# shmem_race of 16 rounds can take longer than Dom0's 300 s),
# XPS_GUEST_SKIP (the list above but gntdev_lock, which is always
# added; comma-separated), XPS_GUEST_CONFIG (the
# guest's correctness.sh configuration, batched; unloaded is the control
# run: the same guest, programs and migrations without the module in the
# guest, to attribute what the guest's kernel log shows).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-guest-module
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
XLG=$REPO/test/lab/xl-guest
GB=$REPO/tools/guest-bench
G=xpsm
MIB=${XPS_GUEST_MIB:-256}
WL_MIB=${XPS_GUEST_WORKLOAD_MIB:-64}
ROUND_TIMEOUT=${XPS_GUEST_ROUND_TIMEOUT:-1800}
MIGRATIONS=${XPS_GUEST_MIGRATIONS:-3}
RACE_ROUNDS=${XPS_GUEST_RACE_ROUNDS:-16}
PROG_TIMEOUT=${XPS_GUEST_PROG_TIMEOUT:-1200}
SKIP=${XPS_GUEST_SKIP:-foreign,xen_console,stress}
case ,$SKIP, in *,gntdev_lock,*) ;; *) SKIP=$SKIP,gntdev_lock ;; esac
CONFIG=${XPS_GUEST_CONFIG:-batched}
# The one kernel warning the guest's log may show, as XPS_KLOG_ALLOW of its
# correctness.sh (a "# kernel log allowed:" note instead of a failure):
# Linux 6.1's own, not the module's.  After a resume from a live
# migration a secondary vCPU leaving idle (cpu_bringup_and_idle, do_idle,
# tick_nohz_idle_exit, hrtimer_cancel, tick_program_event(KTIME_MAX))
# switches its Xen clockevent device to ONESHOT_STOPPED while that device
# is not in oneshot state (it was shut down across the suspend), and
# __clockevents_switch_state() WARNs.  The control run, the same guest,
# programs and migrations without the module in the guest
# (XPS_GUEST_CONFIG=unloaded, "Modules linked in:" empty; lab run
# 20261201-121854-30948), shows the same WARN with the same trace.  No
# page-table code is on that path.  XPS_GUEST_KLOG_ALLOW= (empty) makes it
# a failure again.
KLOG_ALLOW=${XPS_GUEST_KLOG_ALLOW-'WARNING: CPU: [0-9]+ PID: 0 at kernel/time/clockevents\.c:125 clockevents_switch_state'}
CONSOLE_DIR=/var/log/xen/console

start_suite
t0=$SECONDS

# ------------------------------------------------------------- Xen's side
xencmd=$(xl info 2>/dev/null | sed -n 's/^xen_commandline *: //p')
note "Xen command line: $xencmd"
# xen_log: Xen's console: its ring, and the "(XEN)" lines of this boot's
# serial log (the run folder, /xps-lab), which keep the boot messages
# when the ring has wrapped or been cleared.
xen_log() {
	{ xl dmesg; grep -a '^(XEN)' /xps-lab/serial.log | tr -d '\r'; } 2>/dev/null
}
xen_log | grep 'L1TF' | sort -u | head -n 6 | sed 's/^/# L1TF at boot: /'
case " $xencmd " in
*" pv-l1tf="*)
	if xen_log | grep -q 'PV L1TF shadowing: Dom0 [a-z]*, DomU enabled'; then
		pass pv-l1tf-domu-forced
	else
		fail pv-l1tf-domu-forced "Xen does not say \"PV L1TF shadowing: Dom0 ..., DomU enabled\" (command line: $xencmd)"
	fi ;;
esac

BIN=$(xps_correctness_bin) || BIN=
[ -n "$BIN" ] && [ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1

# shadow_faults: Xen's "calls to shadow_fault" perf counter (empty
# without CONFIG_PERF_COUNTERS).
shadow_faults() {
	xenperf 2>/dev/null | sed -n 's/^calls to shadow_fault *T= *\([0-9]*\).*/\1/p' | head -n 1
}

# -------------------------------------------------------- the guest's tree
# add_elfs DIR FILE...: the FILEs (dereferenced) into the tree at DIR, and
# the shared libraries ldd names for any of them, each once, at its own
# path.  One ldd and one cp for all: every process costs under QEMU's
# software CPU.
add_elfs() {
	local dir=$1
	shift
	mkdir -p "$TREE$dir" && cp -L "$@" "$TREE$dir/" || return 1
	ldd "$@" 2>/dev/null |
		awk '$1 !~ /:$/ { for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' |
		sort -u >"$WORK/libs"
	[ -s "$WORK/libs" ] || return 1
	xargs cp -L --parents -t "$TREE" <"$WORK/libs"
}

# make_tree: the guest's second initramfs tree in $TREE (see the header).
make_tree() {
	local rel mods f progs=()
	rel=$(uname -r)
	mods=/lib/modules/$rel
	[ -n "$BIN" ] || { echo "no correctness programs (\$XPS_CORRECTNESS_BIN='${XPS_CORRECTNESS_BIN:-}')"; return 1; }
	[ -r "${XPS_MODULE:-}" ] || { echo "no module (\$XPS_MODULE='${XPS_MODULE:-}')"; return 1; }
	mkdir -p "$TREE/xps/test/suites" "$TREE/xps/test/correctness" "$TREE$mods/extra" "$TREE/etc" &&
	cp test/suites/correctness.sh test/suites/lib.sh "$TREE/xps/test/suites/" &&
	cp test/correctness/*.c test/correctness/*.h "$TREE/xps/test/correctness/" &&
	cp "$XPS_MODULE" "$TREE$mods/extra/" &&
	cp "$mods"/modules.* "$TREE$mods/" &&
	cp /etc/mke2fs.conf "$TREE/etc/" || { echo "cannot copy the suite, the module or modules.*"; return 1; }
	if [ -n "$KLOG_ALLOW" ]; then
		printf '%s\n' "$KLOG_ALLOW" >"$TREE/xps/klog-allow" || return 1
	fi
	# The busybox initramfs resolves no user names: root is enough here.
	add_elfs /usr/local/bin "$(command -v bash)" "$(command -v losetup)" "$(command -v mkfs.ext4)" ||
		{ echo "cannot add bash, losetup, mkfs.ext4 or their libraries"; return 1; }
	for f in "$BIN"/*; do
		if [ -x "$f" ] && [ -f "$f" ]; then progs+=("$f"); fi
	done
	add_elfs /xps-lab/correctness "${progs[@]}" ||
		{ echo "cannot add the programs of $BIN or their libraries"; return 1; }
	cp "$BIN/build.log" "$TREE/xps-lab/correctness/" 2>/dev/null
	return 0
}

# guest_console: the guest's console, first incarnation then the ones that
# arrived by migration (xenconsoled appends those to guest-NAME--incoming.log).
guest_console() {
	cat "$CONSOLE_DIR/guest-$G.log" "$CONSOLE_DIR/guest-$G--incoming.log" 2>/dev/null | tr -d '\r'
}
round_status() {
	guest_console | sed -n 's/.*XPS-GUEST: correctness round 1 done status \([0-9]*\).*/\1/p' | tail -n 1
}
round_done() { guest_console | grep -q 'XPS-GUEST: correctness round 1 done'; }
guest_dead() {
	! xl domid "$G" >/dev/null 2>&1 ||
		guest_console | grep -qE 'XPS-GUEST: workload stopped|Kernel panic'
}

TREE=$WORK/tree
if ! why=$(make_tree); then
	fail guest-create "cannot build the guest's tree: $why"
	finish
fi
note "guest tree: $(du -sh "$TREE" | cut -f1) in $(find "$TREE" -type f | wc -l) files, $((SECONDS - t0)) s"

if ! out=$(modprobe xen_ptswap mode=batched 2>&1); then
	fail dom0-load "modprobe xen_ptswap mode=batched in Dom0: $out"
fi
t1=$SECONDS
if ! out=$("$XLG" create --tree "$TREE" \
	--cmdline "xps_mem=$WL_MIB xps_correctness=$CONFIG xps_skip=$SKIP xps_race_rounds=$RACE_ROUNDS xps_prog_timeout=$PROG_TIMEOUT" \
	"$G" "$MIB" 2 2>&1); then
	fail guest-create "$out"
	klog_take "$KLOG"
	klog_check kernel-log "$KLOG"
	finish
fi
pass guest-create
note "guest $G (domain $(echo "$out" | tail -n 1), $MIB MiB, 2 vCPUs, pattern $WL_MIB MiB) up and filled after $((SECONDS - t1)) s"

for _ in $(seq 300); do
	guest_console | grep -q 'XPS-GUEST: correctness round 1 start' && break
	guest_dead && break
	sleep 1
done
if guest_console | grep -q 'XPS-GUEST: correctness round 1 start'; then
	pass guest-round-start
else
	fail guest-round-start "no \"correctness round 1 start\" on the guest's console; last lines: $(guest_console | tail -n 3 | tr '\n' '|')"
fi
sf0=$(shadow_faults)
note "L1TF: Xen's shadow faults before any migration: ${sf0:-unknown (no xenperf counters)}"

# Live migrations, back to back, while the guest's programs run, at most
# $MIGRATIONS.  Right before and right after each xl migrate
# (guest-bench's --pre and --post hooks, outside its memory check),
# $PROGS_DONE records how many of the guest's programs have finished
# ("# NAME: N s" on its console; not build) and whether its run is over.
# A migration counts when the run was going at its start and, at its end,
# either still going (the whole migration inside the programs) or two or
# more programs had finished inside it (a whole program, zaps included,
# ran while the guest's page tables were shadowed).
# The hook is a script of its own (guest-bench runs it), made of this
# suite's guest_console and round_done.
PROGS_DONE=$WORK/progs-done
{
	echo '#!/bin/bash'
	declare -p CONSOLE_DIR G
	declare -f guest_console round_done
	cat <<'EOS'
n=$(guest_console | grep -E 'XPS-GUEST-T: # [a-z_0-9]+: [0-9]+ s$' | grep -vc 'XPS-GUEST-T: # build:')
over=0
round_done && over=1
echo "$n $over"
EOS
} >"$PROGS_DONE"
chmod +x "$PROGS_DONE"
t2=$SECONDS
n=0 during=0 mig_err=
while [ "$n" -lt "$MIGRATIONS" ] && ! round_done && ! guest_dead &&
	[ $((SECONDS - t2)) -lt "$ROUND_TIMEOUT" ]; do
	rm -f "$WORK/progs-pre" "$WORK/progs-post"
	if ! out=$("$GB" migrate "$G" --pre "$PROGS_DONE >$WORK/progs-pre" \
		--post "$PROGS_DONE >$WORK/progs-post" 2>&1); then
		mig_err="migration $((n + 1)): $(echo "$out" | tail -n 3 | tr '\n' ' ')"
		break
	fi
	n=$((n + 1))
	read -r c0 over0 <"$WORK/progs-pre"
	read -r c1 over1 <"$WORK/progs-post"
	if [ "$over0" = 0 ] && { [ "$over1" = 0 ] || [ $((c1 - c0)) -ge 2 ]; }; then
		during=$((during + 1))
	fi
	note "migration $n: $(echo "$out" | grep '^result '); the guest's run: $c0 programs done, over=$over0 at its start, $c1 done, over=$over1 at its end"
done
if [ -n "$mig_err" ]; then
	fail migrate-during-programs "$mig_err"
elif [ "$during" -gt 0 ]; then
	pass migrate-during-programs
else
	fail migrate-during-programs "no migration ran inside the guest's programs or had a whole program inside it ($n migrations)"
fi
sf1=$(shadow_faults)
note "$n live migrations in $((SECONDS - t2)) s, $during of them inside the guest's programs"
if [ -n "$sf0" ] && [ -n "$sf1" ] && [ "$sf1" -gt "$sf0" ]; then
	pass log-dirty-shadowed
	note "Xen's shadow faults during the migrations: $((sf1 - sf0))"
else
	fail log-dirty-shadowed "\"calls to shadow_fault\" went from '${sf0:-}' to '${sf1:-}' over $n migrations"
fi

# The guest's run to its end, then its verdicts as this suite's.
while ! round_done && ! guest_dead && [ $((SECONDS - t2)) -lt "$ROUND_TIMEOUT" ]; do
	sleep 2
done
note "guest's correctness run: $((SECONDS - t2)) s after the first migration started"
guest_console | sed -n 's/.*XPS-GUEST-T: //p' >"$WORK/guest.out"
rc=$(round_status)
[ -s "$WORK/guest.out" ] ||
	note "the guest's run printed nothing; its console, last lines: $(guest_console | grep -v 'XPS-GUEST: check' | tail -n 8 | tr '\n' '|')"
skipped=$(sed -n 's/^# skipped: \([a-z_]*\) (XPS_CORRECTNESS_SKIP).*/\1/p' "$WORK/guest.out" | sort | tr '\n' ' ')
want=$(echo "$SKIP" | tr ',' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
if [ "$skipped" = "$want" ]; then
	pass guest-skips-as-asked
else
	fail guest-skips-as-asked "the guest skipped '${skipped% }', asked to skip '${want% }'"
fi
if round_done; then
	take_verdicts guest-correctness guest/ "$WORK/guest.out" "${rc:-1}" "$ROUND_TIMEOUT"
else
	take_verdicts guest-correctness guest/ "$WORK/guest.out" 124 "$ROUND_TIMEOUT"
fi

if guest_dead; then
	fail save-restore-with-module "cannot run because the guest is not running"
elif out=$("$GB" save "$G" 2>&1); then
	pass save-restore-with-module
	note "save and restore: $(echo "$out" | grep '^result ')"
else
	fail save-restore-with-module "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
fi

if out=$("$XLG" wait-check "$G" 300 2>&1); then
	pass guest-mem-intact
else
	fail guest-mem-intact "$out"
fi
hits=$(guest_console | grep -v 'XPS-GUEST' | grep -E "$BAD_LOG|Kernel panic" | head -n 3)
if [ -z "$hits" ]; then
	pass guest-console-clean
else
	fail guest-console-clean "$(echo "$hits" | tr '\n' '|')"
fi

# L1TF: did Xen shadow the guest for an L1TF-vulnerable entry?
l1tf=$(xen_log | grep 'L1TF-vulnerable' | sort -u | head -n 3)
if [ -n "$l1tf" ]; then
	note "L1TF: shadowing engaged: $(echo "$l1tf" | tr '\n' '|')"
else
	note "L1TF: no \"L1TF-vulnerable ... Shadowing\" in Xen's log: L1TF shadowing never engaged${sf0:+; shadow faults before the first migration: $sf0}"
fi

xl destroy "$G" >/dev/null 2>&1
left=
for _ in $(seq 60); do
	if ! all=$(xl list 2>&1) || ! echo "$all" | grep -q '^Domain-0 '; then
		left="xl list failed or shows no Domain-0: $all"
		break
	fi
	left=$(echo "$all" | awk 'NR > 1 && $1 != "Domain-0"')
	[ -z "$left" ] && break
	sleep 1
done
if [ -z "$left" ]; then
	pass no-domain-left-dying
else
	fail no-domain-left-dying "60 s after xl destroy: $(echo "$left" | tr -s ' ' | tr '\n' '|')"
fi
if stats_settle; then
	note "Dom0 module counters: $(tr '\n' ' ' <"$STATS")"
fi
xps_loaded && rmmod xen_ptswap
end_checks "$KLOG"
note "guest-module suite: $((SECONDS - t0)) s"
finish
