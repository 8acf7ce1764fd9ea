#!/bin/bash
# tools/lab-ab.sh - `make lab`: the A/B measurement in the lab, on the HOST.
#
# Boots the lab twice (test/lab/run, ~1 min each once built; the first run
# builds Xen and the kernel, 15-20 min on 2 cores):
#   1. --kernel native: the patched kernel without Xen; tools/ab-run there
#      measures the native floor into out/native-$AB_BENCH.csv;
#   2. patched Xen + patched PV Dom0: tools/ab-run alternates module
#      unloaded / mode=batched / mode=sync for $AB_ROUNDS rounds, with the
#      native floor beside them, into out/ab-$AB_BENCH.{csv,txt,png} and
#      out/ab-$AB_BENCH-summary.csv;
# then prints the table and issue 5's targets (out/ab-$AB_BENCH.txt).
#
# Usage: tools/lab-ab.sh        (or: make lab)
# Environment (defaults): AB_SIZE=256M  AB_ROUNDS=5  AB_BENCH=madv
#   (madv|munmap|foreign)  AB_FRAMES=65536 AB_BATCH=1024 (foreign only)
#   LAB_OPTS="" extra test/lab/run options for the Xen boot (e.g.
#   "--timeout 3600").
# Units: milliseconds of wall time on QEMU's software CPU (TCG): ratios are
# compressed against hardware; the per-1000-PTE counts carry over.
# Exit status: that of the Xen boot's ab-run (0: every variant ran; the
# targets are reported, not enforced), or the lab's (121-125, see
# test/lab/README.md), or the native boot's if it failed.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
size=${AB_SIZE:-256M}
rounds=${AB_ROUNDS:-5}
bench=${AB_BENCH:-madv}
extra=(--bench "$bench" --size "$size" --rounds "$rounds"
	--frames "${AB_FRAMES:-65536}" --batch "${AB_BATCH:-1024}")
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
rc=0
# shellcheck disable=SC2086 # LAB_OPTS is a list of options
test/lab/run ${LAB_OPTS:-} -- \
	bash -c 'make -s -C tools && exec tools/ab-run "$@"' ab-run \
	"${extra[@]}" "${native[@]}" --csv "out/ab-$bench.csv" || rc=$?

if [ -f "out/ab-$bench.txt" ]; then
	echo
	cat "out/ab-$bench.txt"
	echo "(lab figures: QEMU software CPU; CSV out/ab-$bench.csv, chart out/ab-$bench.png)"
fi
exit "$rc"
