#!/bin/bash
# tools/lab-ab.sh - `make lab`: the A/B measurement in the lab, on the HOST.
#
# Boots the lab twice (test/lab/run, 1-5 min each once built; the first run
# builds Xen and the kernel, about 20 min on 2 cores):
#   1. --kernel native: the patched kernel without Xen; tools/ab-run there
#      measures the native floor into out/native-$AB_BENCH.csv;
#   2. patched Xen + patched PV Dom0: tools/ab-run alternates module
#      unloaded / mode=batched (runs=Y) / runs=0 / mode=sync / mode=noswap
#      for $AB_ROUNDS rounds, with the
#      native floor beside them, into out/ab-$AB_BENCH.{csv,txt,png} and
#      out/ab-$AB_BENCH-summary.csv; then tools/req-cost, the cost of one
#      cleared L1 entry each way (ptwr, MMU_NORMAL_PT_UPDATE,
#      MMU_PT_UPDATE_SWAP), into out/req-cost.txt;
#   3. unless AB_GUESTS=0 (and only for AB_BENCH=madv): patched Xen with
#      memory for guests: test/lab/xl-guest starts a PV guest of
#      AB_GUEST_MIB MiB, and tools/ab-run --bench save, restore and migrate
#      alternate the same variants for AB_GUEST_ROUNDS rounds each (no
#      native floor: these need Xen), with the time the sending side (xl,
#      libxl-save-helper) spends in unmap_page_range() and its share of
#      the operation (bpftrace, as the public migration profile measured),
#      into out/ab-{save,restore,migrate}.*,
#      then foreign-bench against the same guest (map all its frames in
#      batches of 1024, unmap them: the public proof of concept's test)
#      into out/ab-foreign-guest.*;
#      the guest checks its whole memory pattern after every operation;
# ab-run prints each boot's table inside it (the A/B one with its
# targets, also kept in out/ab-$AB_BENCH.txt) and test/lab/run relays the
# booted system's console here, so each table appears once; then one line
# points to the files.  Last, for AB_BENCH=madv, tools/lab-targets marks
# the performance targets from this run's files in out/ (which this script
# removes first, so that a file an earlier run left is never read).  The AB_* values are checked before anything boots.
#
# Usage: tools/lab-ab.sh        (or: make lab)
# Environment (defaults): AB_SIZE=256M (bytes, or with a K, M or G suffix;
#   not 0)  AB_ROUNDS=5  AB_BENCH=madv (madv|munmap|foreign)
#   AB_FRAMES=65536 AB_BATCH=1024 (foreign only; positive integers, like
#   AB_ROUNDS)
#   AB_STACK=debian12 (make lab STACK=NAME): the stack of every boot, the
#   native floor's kernel included: a file of test/lab/stacks/ (debian12:
#   Xen 4.17.5 + Linux 6.1, Debian 12's, the default, a cold run builds in
#   about 20 min; debian13: Xen 4.20.4 + Linux 6.12 with Debian 13's
#   options and the 4.20 toolstack; qubes-4.2: Xen 4.17.5 + Linux 6.18
#   with Qubes OS's options; qubes-4.3: Xen 4.19.6 and its toolstack +
#   Linux 6.18; xen-4.22: Xen 4.22.0 with Linux 6.12; a cold run of a
#   stack other than debian12 builds its kernel and toolstack first, 40-60
#   min on 2 cores); or staging, not a stack: upstream's Xen staging with
#   its series and toolstack, Linux 6.12 as in debian13.
#   LAB_OPTS="" extra test/lab/run options for the Xen boots (e.g.
#   "--timeout 3600").  AB_HOST=1 (0: boots 1 and 2 left out, the guest
#   boot only; AB_BENCH=madv and AB_GUESTS=1 then)
#   AB_GUESTS=1 (0: no guest boot) AB_GUEST_MIB=256
#   AB_GUEST_ROUNDS=3 (the guest boot takes about 20 min on 2 cores:
#   each save, restore and migration of 256 MiB takes 15-40 s under QEMU,
#   plus a full check of the guest's memory after each).
# Units: milliseconds of wall time on QEMU's software CPU (TCG): ratios are
# compressed against hardware; the per-1000-PTE counts carry over.
# Exit status: that of the Xen boot's ab-run (0: every variant ran; the
# targets are reported, not enforced), or the lab's (121-125, see
# test/lab/README.md), or the native boot's if it failed; with AB_HOST=0
# the guest boot's; 2 when an AB_* value is not valid (nothing booted).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
size=${AB_SIZE:-256M}
rounds=${AB_ROUNDS:-5}
bench=${AB_BENCH:-madv}
frames=${AB_FRAMES:-65536}
batch=${AB_BATCH:-1024}

# Check the values here: a bad one would otherwise show only after a boot
# (or a first build of 15-20 min).  Sizes as ab-run takes them.
bad() {
	echo "lab-ab: $1" >&2
	exit 2
}
case $bench in
madv | munmap | foreign) ;;
*) bad "AB_BENCH=$bench: not a benchmark (madv, munmap or foreign)" ;;
esac
if ! [[ $size =~ ^[0-9]+[KkMmGg]?(i?B)?$ ]]; then
	bad "AB_SIZE=$size: not a size (bytes, or with K, M or G)"
elif [[ $size =~ ^0+[KkMmGg]?(i?B)?$ ]]; then
	bad "AB_SIZE=$size: the size must be more than 0"
fi
# A stack is a file of test/lab/stacks/ (test/lab/run --stack).  staging
# (upstream's Xen staging with Linux 6.12) is not one: every stack boots in
# every make check, and staging's builds are the whole matrix's only.
stack_name=${AB_STACK:-debian12}
if [ "$stack_name" = staging ]; then
	stack=(--xen-version staging --linux 6.12)
elif ! [[ $stack_name =~ ^[a-z0-9][a-z0-9.-]*$ ]] || [ ! -f "test/lab/stacks/$stack_name" ]; then
	bad "AB_STACK=$stack_name: not a stack of test/lab/stacks/ ($(cd test/lab/stacks && echo *)) nor staging"
else
	stack=(--stack "$stack_name")
fi
guests=${AB_GUESTS:-1}
guest_mib=${AB_GUEST_MIB:-256}
guest_rounds=${AB_GUEST_ROUNDS:-3}
host=${AB_HOST:-1}
case $guests in 0|1) ;; *) bad "AB_GUESTS=$guests: 0 or 1" ;; esac
case $host in 0|1) ;; *) bad "AB_HOST=$host: 0 or 1" ;; esac
[ "$host" = 1 ] || { [ "$guests" = 1 ] && [ "$bench" = madv ]; } ||
	bad "AB_HOST=0 leaves only the guest boot: it needs AB_GUESTS=1 and AB_BENCH=madv"
for v in AB_ROUNDS="$rounds" AB_FRAMES="$frames" AB_BATCH="$batch" \
	AB_GUEST_MIB="$guest_mib" AB_GUEST_ROUNDS="$guest_rounds"; do
	[[ ${v#*=} =~ ^0*[1-9][0-9]*$ ]] || bad "$v: not a positive integer"
done

extra=(--size "$size" --rounds "$rounds" --frames "$frames" --batch "$batch")
mkdir -p out
# The files tools/lab-targets reads: this run writes them again, or the
# target is reported as not measured.
[ "$bench" = madv ] && rm -f out/req-cost.txt out/ab-madv-summary.csv \
	out/ab-madv-clean-summary.csv out/ab-save-summary.csv out/ab-migrate-summary.csv \
	out/ab-foreign-guest-summary.csv

# The benchmarks of boots 1 and 2: AB_BENCH, and for madv its clean twin.
benches=("$bench")
[ "$bench" = madv ] && benches+=(madv-clean)

# The command of boots 1 and 2: tools/ab-run once per benchmark, its
# arguments the benchmarks, "--", then ab-run's options, in which BENCH
# (in --csv and --native) stands for each benchmark's name.
# shellcheck disable=SC2016 # the inner shell's own variables
per_bench='make -s -C tools || exit 1
	b=(); while [ "$1" != -- ]; do b+=("$1"); shift; done; shift
	rc=0
	for x in "${b[@]}"; do tools/ab-run --bench "$x" "${@//BENCH/$x}" || rc=1; done
	if [ -n "${XPS_REQ_COST:-}" ]; then tools/req-cost -o out/req-cost.txt || rc=1; fi
	exit $rc'

rc=0
if [ "$host" = 0 ]; then
	echo "lab-ab: AB_HOST=0: no native floor, no A/B boot"
elif [ "$bench" != foreign ]; then
	echo "lab-ab: native floor: ${benches[*]}, $size, $rounds rounds (kernel without Xen)"
	for b in "${benches[@]}"; do rm -f "out/native-$b.csv"; done
	test/lab/run ${stack[@]+"${stack[@]}"} --kernel native -- bash -c "$per_bench" ab-run "${benches[@]}" -- \
		"${extra[@]}" --csv out/native-BENCH.csv --png none
	native=(--native out/native-BENCH.csv)
else
	echo "lab-ab: foreign: no native floor (it needs Xen)"
	native=()
fi

# stack_value KEY: the value of KEY's line in the stack's file, as
# test/lab/run reads it.
stack_value() {
	awk -v k="$1" '$1 == k { sub(/^[^ \t]+[ \t]+/, ""); print; exit }' "test/lab/stacks/$stack_name"
}
if [ "$stack_name" = staging ]; then
	what="Xen staging, Linux 6.12"
else
	what="stack $stack_name: $(stack_value title), Xen $(stack_value xen), Linux $(stack_value linux)"
fi
if [ "$host" = 1 ]; then
	echo "lab-ab: A/B in one boot ($what): unloaded, batched, batched-noruns, sync, noswap x $rounds rounds: ${benches[*]}"
	# ab-run prints the table in Dom0 (test/lab/run relays it) and writes this
	# file only when it completes: remove an old one so the pointer below is
	# this run's.
	for b in "${benches[@]}"; do rm -f "out/ab-$b.txt"; done
	# shellcheck disable=SC2086 # LAB_OPTS is a list of options
	test/lab/run ${stack[@]+"${stack[@]}"} ${LAB_OPTS:-} --env XPS_REQ_COST=1 -- \
		bash -c "$per_bench" ab-run "${benches[@]}" -- \
		"${extra[@]}" "${native[@]}" --csv out/ab-BENCH.csv || rc=$?

	for b in "${benches[@]}"; do
		if [ -f "out/ab-$b.txt" ]; then
			echo "(lab figures: QEMU software CPU; CSV out/ab-$b.csv, chart out/ab-$b.png)"
		fi
	done
fi

if [ "$guests" = 1 ] && [ "$bench" = madv ]; then
	echo "lab-ab: guests: xl save, xl restore, xl migrate of a $guest_mib MiB PV guest, unloaded, batched, batched-noruns, sync, noswap x $guest_rounds rounds"
	rm -f out/ab-save.txt out/ab-restore.txt out/ab-migrate.txt out/ab-foreign-guest.txt
	grc=0
	# A live migration to the same Dom0 holds two copies of the guest.
	# shellcheck disable=SC2016,SC2086 # $1/$2 are the inner shell's; LAB_OPTS a list
	test/lab/run ${stack[@]+"${stack[@]}"} ${LAB_OPTS:-} --guest-mem $((guest_mib * 3)) --timeout 7200 -- \
		bash -c 'make -s -C tools || exit 1
			test/lab/xl-guest create abg "$1" >/dev/null || exit 1
			rc=0
			for b in save restore migrate; do
				tools/ab-run --bench "$b" --guest abg --rounds "$2" --warmup 0 \
					--bpftrace on --csv "out/ab-$b.csv" || rc=1
			done
			# The public proof of concept'"'"'s test: map the running
			# guest'"'"'s memory in batches and unmap it.
			tools/ab-run --bench foreign --domid "$(xl domid abg)" \
				--frames $(($1 * 256)) --rounds "$2" \
				--csv out/ab-foreign-guest.csv || rc=1
			exit $rc' lab-ab "$guest_mib" "$guest_rounds" || grc=$?
	for b in save restore migrate foreign-guest; do
		[ -f "out/ab-$b.txt" ] && echo "(guest figures: CSV out/ab-$b.csv, chart out/ab-$b.png)"
	done
	[ "$rc" = 0 ] && rc=$grc
fi
[ "$bench" = madv ] && tools/lab-targets out
exit "$rc"
