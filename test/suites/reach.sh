#!/bin/bash
# test/suites/reach.sh - several suites in one lab boot: the suites of
# test/suites/SUITES that share a kernel and Xen variant (6.12, 7.3, 6.1's
# debug kernel, 6.1's hook and DKMS) in every `make check`.
#
# Usage (inside the lab's Dom0, from the clone's root, as root):
#   test/lab/run --linux 7.3 --dkms -- bash test/suites/reach.sh \
#       xen-swap module dkms correctness-batched
#   test/lab/run --linux 7.3 --dkms \
#       --env XPS_REACH=xen-swap,module,dkms,correctness-batched \
#       -- bash test/suites/reach.sh
# Each argument (or, without arguments, each comma-separated name of
# $XPS_REACH: SUITES lines give no arguments) names a suite, test/suites/NAME.sh; they run one after the
# other, in the order given, each as its own process with the lab's
# environment (so XPS_MODULE_CYCLES, XPS_MODULE_MIB and the other knobs
# reach them).  Every "PASS: <check>" and "FAIL: <check>: <why>" line of
# suite NAME is printed as "PASS: NAME/<check>" ("FAIL: NAME/<check>:
# <why>"), its other lines as they are.  A suite that prints no result, or
# ends with a non-zero status and no FAIL line, gets "FAIL: NAME/ended:
# <why>".  The boot, the build of the module and the correctness programs
# are shared; each suite still starts and ends as it does on its own
# (module unloaded, its kernel-log and Xen-console checks).  On a kernel
# with lockdep, "NAME/lockdep-on-after" checks that lockdep is still on
# when suite NAME ends: lockdep checks nothing more once it has reported
# anything, so the suites after it in the boot would run unchecked.
# Output: the lines above, "N passed, N failed" last; exit status 0 iff
# nothing failed; 2 for no names or a name without a script.

set -u
shopt -s lastpipe
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"	# lockdep_state only; it sets passed and failed to 0
passed=0
failed=0

if [ $# = 0 ] && [ -n "${XPS_REACH:-}" ]; then
	IFS=, read -r -a names <<<"$XPS_REACH"
	set -- "${names[@]}"
fi
[ $# -gt 0 ] || { echo "reach.sh: name at least one suite of test/suites/ (arguments or \$XPS_REACH)" >&2; exit 2; }
for name in "$@"; do
	case $name in
	reach|lib|*/*|'') echo "reach.sh: '$name' is not a suite to run here" >&2; exit 2 ;;
	esac
	[ -f "$SUITES/$name.sh" ] || { echo "reach.sh: no test/suites/$name.sh" >&2; exit 2; }
done

lockdep=$(lockdep_state)
[ "$lockdep" = 0 ] && echo "# reach: lockdep was off before the first suite"
for name in "$@"; do
	echo "# reach: $name"
	t0=$SECONDS
	n=0 nfail=0 rc=
	# A pipe, read by this shell (lastpipe), so that the counters below
	# outlive the loop.
	{ bash "$SUITES/$name.sh" </dev/null 2>&1; echo "reach-status $?"; } |
	while IFS= read -r line; do
		case $line in
		PASS:\ *)
			echo "PASS: $name/${line#PASS: }"
			passed=$((passed + 1)) n=$((n + 1)) ;;
		FAIL:\ *)
			echo "FAIL: $name/${line#FAIL: }"
			failed=$((failed + 1)) n=$((n + 1)) nfail=$((nfail + 1)) ;;
		*[0-9]\ passed,\ [0-9]*\ failed) echo "# $name: $line" ;;
		reach-status\ *) rc=${line#reach-status } ;;
		*) echo "$line" ;;
		esac
	done
	# The suite's exit status comes last, as "reach-status N".
	if [ "$n" = 0 ] || { [ "$rc" != 0 ] && [ "$nfail" = 0 ]; }; then
		echo "FAIL: $name/ended: status $rc after $n checks"
		failed=$((failed + 1))
	fi
	# Only the suite after which lockdep went off fails; later ones ran
	# unchecked, which a note says.
	case $lockdep:$(lockdep_state) in
	:*|*:) ;;
	1:1)
		echo "PASS: $name/lockdep-on-after"
		passed=$((passed + 1)) ;;
	1:*)
		echo "FAIL: $name/lockdep-on-after: lockdep is off after $name (it reported something, or a taint switched it off: taint $(cat /proc/sys/kernel/tainted))"
		failed=$((failed + 1))
		lockdep=0 ;;
	*) echo "# reach: $name ran with lockdep off" ;;
	esac
	echo "# reach: $name: $n checks, $nfail failed, status $rc, $((SECONDS - t0)) s"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
