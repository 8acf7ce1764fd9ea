#!/bin/bash
# tools/lab-ab.sh - `make lab`: the A/B measurement in the lab, on the HOST.
#
# Boots the lab twice (test/lab/run, 1-5 min each once built; the first run
# builds Xen and the kernel, about 20 min on 2 cores):
#   1. --kernel native: the patched kernel without Xen; tools/ab-run there
#      measures the native floor into out/native-$AB_BENCH.csv;
#   2. patched Xen + patched PV Dom0: tools/ab-run alternates module
#      unloaded / mode=batched / mode=sync for $AB_ROUNDS rounds, with the
#      native floor beside them, into out/ab-$AB_BENCH.{csv,txt,png} and
#      out/ab-$AB_BENCH-summary.csv;
# ab-run prints each boot's table inside it (the A/B one with issue 5's
# targets, also kept in out/ab-$AB_BENCH.txt) and test/lab/run relays the
# booted system's console here, so each table appears once; then one line
# points to the files.  The AB_* values are checked before anything boots.
#
# Usage: tools/lab-ab.sh        (or: make lab)
# Environment (defaults): AB_SIZE=256M (bytes, or with a K, M or G suffix;
#   not 0)  AB_ROUNDS=5  AB_BENCH=madv (madv|munmap|foreign)
#   AB_FRAMES=65536 AB_BATCH=1024 (foreign only; positive integers, like
#   AB_ROUNDS)
#   LAB_OPTS="" extra test/lab/run options for the Xen boot (e.g.
#   "--timeout 3600").
# Units: milliseconds of wall time on QEMU's software CPU (TCG): ratios are
# compressed against hardware; the per-1000-PTE counts carry over.
# Exit status: that of the Xen boot's ab-run (0: every variant ran; the
# targets are reported, not enforced), or the lab's (121-125, see
# test/lab/README.md), or the native boot's if it failed; 2 when an AB_*
# value is not valid (nothing booted).
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
for v in AB_ROUNDS="$rounds" AB_FRAMES="$frames" AB_BATCH="$batch"; do
	[[ ${v#*=} =~ ^0*[1-9][0-9]*$ ]] || bad "$v: not a positive integer"
done

extra=(--bench "$bench" --size "$size" --rounds "$rounds"
	--frames "$frames" --batch "$batch")
native_csv=out/native-$bench.csv
mkdir -p out

if [ "$bench" != foreign ]; then
	echo "lab-ab: native floor: $bench, $size, $rounds rounds (kernel without Xen)"
	rm -f "$native_csv"
	test/lab/run --kernel native -- \
		bash -c 'make -s -C tools && exec tools/ab-run "$@"' ab-run \
		"${extra[@]}" --csv "$native_csv" --png none
	native=(--native "$native_csv")
else
	echo "lab-ab: foreign: no native floor (it needs Xen)"
	native=()
fi

echo "lab-ab: A/B in one boot: unloaded, batched, sync x $rounds rounds"
# ab-run prints the table in Dom0 (test/lab/run relays it) and writes this
# file only when it completes: remove an old one so the pointer below is
# this run's.
rm -f "out/ab-$bench.txt"
rc=0
# shellcheck disable=SC2086 # LAB_OPTS is a list of options
test/lab/run ${LAB_OPTS:-} -- \
	bash -c 'make -s -C tools && exec tools/ab-run "$@"' ab-run \
	"${extra[@]}" "${native[@]}" --csv "out/ab-$bench.csv" || rc=$?

if [ -f "out/ab-$bench.txt" ]; then
	echo "(lab figures: QEMU software CPU; CSV out/ab-$bench.csv, chart out/ab-$bench.png)"
fi
exit "$rc"
