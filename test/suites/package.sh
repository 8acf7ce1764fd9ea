#!/bin/bash
# test/suites/package.sh - the Debian packages of `make deb` in the lab's
# Dom0, as an operator uses them: xen-ptswap-dkms and xen-ptswap-tools
# installed with apt from the clone's out/deb/, the module built by DKMS
# and loaded with the package's defaults (mode=auto), the status command,
# then `apt-get remove` and `apt-get purge` leaving nothing behind.
#
# Needs: the .debs of this tree's version (dkms.conf's PACKAGE_VERSION) in
# out/deb/ of the clone (`make deb` on the host before the boot), a kernel
# with the series (XPS_LAB_KERNEL patched, debug or kasan), root.  Dom0
# has no network: the packages' dependencies (dkms, python3, libxen) must
# already be in the host's root, as test/lab/run installs them (a dry run,
# apt-get -s, checks that before the install).
#
# The DKMS build: booted with `test/lab/run --dkms` ($XPS_DKMS_TARBALL:
# DKMS's build on the host against this kernel's tree, packed with `dkms
# mktarball --binaries-only`), the suite puts that tarball where DKMS's
# common.postinst (dh_dkms's postinst calls it) looks for a prebuilt one,
# /usr/share/xen-ptswap-dkms/xen-ptswap-VERSION.dkms.tar.gz: the postinst
# then loads it with `dkms ldtarball` instead of `dkms add`, finds the
# module built for this kernel and only runs `dkms install`.  (Loading it
# with `dkms ldtarball` before `apt-get install` would not do: the postinst
# first removes any xen-ptswap VERSION from DKMS's tree, then compiles.)
# The tarball is not the package's: the suite deletes it after the install.
# Without $XPS_DKMS_TARBALL the postinst compiles the module under QEMU's
# software CPU (about 15 minutes; test/suites/dkms.sh).  An "info:" line
# says which way it went.
#
# Checks, one "PASS: <check>" or "FAIL: <check>: <why>" line each:
#   debs                 out/deb/ holds one xen-ptswap-dkms and one
#                        xen-ptswap-tools .deb of dkms.conf's version
#   apt-install          apt-get install -y of both files, offline (fails
#                        first, naming them, if apt would need to download
#                        a dependency)
#   dkms-installed       `dkms status` says installed for $(uname -r), and
#                        modinfo finds the module under updates/dkms/ or
#                        extra/
#   modprobe-defaults    modprobe's configuration has the package's
#                        "options xen_ptswap mode=auto"
#   modules-load-disabled  /etc/modules-load.d/xen-ptswap.conf is there and
#                        names the module only in a comment
#   modprobe             `modprobe xen_ptswap`, no option, loads it
#   mode-auto            its mode parameter reads batched on a patched or
#                        debug Xen, noswap on a stock or feature-only Xen
#   mode-logged          the kernel log has "xen_ptswap: installed,
#                        mode=<that mode>"
#   status               `xen-ptswap status` exits 0
#   status-json          `xen-ptswap status --json` exits 0, its output
#                        parses (python3 -m json.tool) and says "ok": true
#   status-stats-copy    --stats of a consistent copy of the stats file: 0
#   status-broken-calls  --stats of that copy with calls + 1: exit status 1
#                        and a FAIL line naming the invariant "calls"
#   rmmod
#   ab-run               xen-ptswap-ab-run (the packaged runner) --bench madv
#                        --size 16M --rounds 1 --variants unloaded,<that
#                        mode>: exit 0 and a time for both in its CSV
#   ab-run-unloads       the module is not loaded after it
#   remove               apt-get remove -y of both packages, then
#   remove-src, remove-dkms, remove-ko, remove-tools, remove-modprobe-conf:
#                        no /usr/src/xen-ptswap-*, no xen-ptswap in `dkms
#                        status` or /var/lib/dkms, no xen_ptswap.ko under
#                        /lib/modules/$(uname -r)/, none of the tools'
#                        files, no /usr/lib/modprobe.d/xen-ptswap.conf
#   remove-conffile-kept /etc/modules-load.d/xen-ptswap.conf kept
#   remove-dpkg-state    dpkg: xen-ptswap-dkms "rc", xen-ptswap-tools gone
#   purge                apt-get purge -y of both, then
#   purge-conffile, purge-dpkg: the modules-load file gone, dpkg knows
#                        neither package
#   kernel-log, end/xen-console-clean: as in every suite (lib.sh)
# Before the install the suite clears what an earlier suite of the same
# boot may have left (reach.sh): DKMS's xen-ptswap entries and a
# /usr/src/xen-ptswap-* tree that dpkg does not own (dkms.sh's), and it
# moves the lab's own xen_ptswap.ko (test/lab/dom0-run.sh installs it in
# /lib/modules/$(uname -r)/extra/) aside, putting it back at the end.
# Output: those lines, "info:" and "# " notes, "N passed, N failed" last;
# exit status 0 iff nothing failed.

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-package
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
info() { echo "info: $*"; }

NAME=xen-ptswap
PKGS=(xen-ptswap-dkms xen-ptswap-tools)
REL=$(uname -r)
MODS=/lib/modules/$REL
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
PREBUILT_DIR=/usr/share/xen-ptswap-dkms
LAB_KO=$MODS/extra/xen_ptswap.ko
# apt-get without a network: no lists update, no recommends, no sandbox
# user (the .debs are on the clone's 9p mount).  (Not --no-download: apt
# 2.6 then refuses local .deb files, "Pathname to install is not
# absolute"; the dry run below makes sure nothing is to be downloaded.)
APT=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends
     -o APT::Sandbox::User=root -o Dpkg::Use-Pty=0)

start_suite
BIN=$(xps_correctness_bin) || BIN=
[ -n "$BIN" ] && [ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1
t_suite=$SECONDS

# restore_lab_ko: the lab's own module back where dom0-run.sh put it, for
# the suites after this one in the boot.
restore_lab_ko() {
	if [ -f "$WORK/lab-xen_ptswap.ko" ]; then
		mkdir -p "$MODS/extra"
		mv -f "$WORK/lab-xen_ptswap.ko" "$LAB_KO"
		depmod -a 2>/dev/null
	fi
}
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	rmmod xen_ptswap 2>/dev/null
	rm -rf "$PREBUILT_DIR"
	restore_lab_ko
}
trap cleanup EXIT

# dkms_versions: the versions of xen-ptswap in DKMS's tree, one a line
# (its directories whose names start with a digit: not original_module,
# not the kernel-* links).
dkms_versions() {
	local d
	for d in "/var/lib/dkms/$NAME"/[0-9]*/; do
		[ -d "$d" ] && [ ! -L "${d%/}" ] && basename "$d"
	done
}

# dpkg_abbrev PKG: dpkg's two-letter state of PKG ("ii", "rc"), empty when
# dpkg knows nothing of it.
dpkg_abbrev() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | tr -d ' '; }

# stats_snapshot FILE: a copy of the live stats file whose counters keep
# the invariants (per-CPU sums read without a lock: up to 50 reads).
stats_snapshot() {
	local _
	for _ in {1..50}; do
		cat "$STATS" >"$1" 2>/dev/null || return 1
		awk '$1 == "mode" { next } { v[$1] = $2 }
		     END { exit !(("calls" in v) &&
			v["calls"] == v["unpinned"] + v["none"] + v["deferred"] + v["swapped"] + v["fallbacks"] + v["native"] &&
			v["hcall_errors"] == v["fallbacks"] + v["lost_old"]) }' "$1" && return 0
	done
	return 1
}

# --- what this boot allows -------------------------------------------------
[ -n "$VER" ] || { fail setup "no PACKAGE_VERSION in $REPO/dkms.conf"; finish; }
case ${XPS_LAB_KERNEL:-patched} in
patched|debug|kasan) ;;
*) fail setup "cannot run: the module loads only on a kernel with the series (XPS_LAB_KERNEL=${XPS_LAB_KERNEL:-})"; finish ;;
esac
case ${XPS_LAB_XEN:-patched} in
patched|debug) want=batched ;;
stock|stock-4.20|feature-only) want=noswap ;;
*) fail setup "cannot run: no expected mode=auto for XPS_LAB_XEN=${XPS_LAB_XEN:-}"; finish ;;
esac
info "kernel $REL, xen=${XPS_LAB_XEN:-?} kernel=${XPS_LAB_KERNEL:-?}, version $VER, mode=auto should pick $want"

# --- the packages ------------------------------------------------------------
debs=()
shopt -s nullglob
for p in "${PKGS[@]}"; do
	found=("$REPO/out/deb/${p}_${VER}"-*.deb)
	[ ${#found[@]} = 1 ] && debs+=("${found[0]}")
done
shopt -u nullglob
if [ ${#debs[@]} != 2 ]; then
	fail debs "cannot run: out/deb/ has no single xen-ptswap-dkms and xen-ptswap-tools .deb of version $VER (found: $(cd "$REPO" && find out/deb -name '*.deb' 2>/dev/null | tr '\n' ' ')): run make deb on the host before the boot"
	finish
fi
pass debs
info "packages: ${debs[*]#"$REPO"/}"

# --- leftovers of earlier suites in this boot --------------------------------
rmmod xen_ptswap 2>/dev/null
for p in "${PKGS[@]}"; do
	if [ -n "$(dpkg_abbrev "$p")" ]; then
		note "purging $p, left by an earlier run ($(dpkg_abbrev "$p"))"
		"${APT[@]}" purge "$p" >"$WORK/pre-purge.out" 2>&1
	fi
done
for v in $(dkms_versions); do
	note "removing $NAME $v from DKMS's tree (left by an earlier suite)"
	dkms remove -m "$NAME" -v "$v" --all >/dev/null 2>&1
done
for d in "/usr/src/$NAME"-*; do
	[ -e "$d" ] || continue
	if ! dpkg -S "$d" >/dev/null 2>&1; then
		note "removing $d (not dpkg's: left by make module-dkms-src)"
		rm -rf "$d"
	fi
done
if [ -f "$LAB_KO" ]; then
	mv "$LAB_KO" "$WORK/lab-xen_ptswap.ko" && depmod -a 2>/dev/null
fi

# --- apt-get install ---------------------------------------------------------
# A dry run first: any package besides ours that apt would install needs a
# download, which Dom0 cannot do.
"${APT[@]}" -s install "${debs[@]}" >"$WORK/install-dry.out" 2>&1
extra=$(awk '$1 == "Inst" && $2 !~ /^xen-ptswap-(dkms|tools)$/ { print $2 }' "$WORK/install-dry.out" | tr '\n' ' ')
if [ -n "$extra" ]; then
	fail apt-install "cannot run: the packages need $extra, which the host's root lacks (Dom0 has no network): apt-get install them on the host"
	finish
fi
if ! grep -q '^Inst xen-ptswap-dkms ' "$WORK/install-dry.out"; then
	fail apt-install "apt-get -s install does not plan xen-ptswap-dkms: $(tail -n 3 "$WORK/install-dry.out" | tr '\n' ' ')"
	finish
fi
if [ -n "${XPS_DKMS_TARBALL:-}" ] && [ -f "$XPS_DKMS_TARBALL" ]; then
	mkdir -p "$PREBUILT_DIR"
	cp "$XPS_DKMS_TARBALL" "$PREBUILT_DIR/$NAME-$VER.dkms.tar.gz"
	limit=900 way=prebuilt
else
	limit=2400 way=compile
fi
t0=$SECONDS
timeout -k 10 $limit "${APT[@]}" install "${debs[@]}" >"$WORK/install.out" 2>&1
rc=$?
t_install=$((SECONDS - t0))
rm -rf "$PREBUILT_DIR"
if [ $rc = 0 ]; then
	pass apt-install
else
	fail apt-install "status $rc after $t_install s (limit $limit s): $(grep -v '^\(Get\|Selecting\|Preparing\|Unpacking\|Reading\|Building\) ' "$WORK/install.out" | tail -n 6 | tr '\n' ' ')"
fi
sed -n '/^Setting up xen-ptswap-dkms/,/^Setting up xen-ptswap-tools/p' "$WORK/install.out" | sed 's/^/# postinst: /' | head -n 30
if [ $way = prebuilt ]; then
	if grep -q "^Loading tarball for $NAME-$VER" "$WORK/install.out" &&
		! grep -q '^Building initial module' "$WORK/install.out"; then
		info "DKMS: the postinst loaded the host's build ($XPS_DKMS_TARBALL, dkms ldtarball) and installed it, no compile in Dom0; apt-get install took $t_install s"
	else
		info "DKMS: the host's build was offered ($XPS_DKMS_TARBALL) but the postinst did not load it (see the postinst lines); apt-get install took $t_install s"
	fi
else
	info "DKMS: no host build (\$XPS_DKMS_TARBALL unset: boot without --dkms, or the host build failed), the postinst builds in Dom0: '$(grep -m1 -E '^Building initial module|was skipped|^Error!' "$WORK/install.out")'; apt-get install took $t_install s"
fi

st=$(dkms status -m "$NAME" -v "$VER" -k "$REL" 2>/dev/null | grep -v 'if /proc')
ko=$(modinfo -n xen_ptswap 2>/dev/null)
info "dkms status: $st; modinfo -n xen_ptswap: $ko"
case $st:$ko in
*": installed"*:"$MODS"/updates/dkms/*|*": installed"*:"$MODS"/extra/*) pass dkms-installed ;;
*) fail dkms-installed "dkms status '$st', modinfo -n '$ko'" ;;
esac

if modprobe -c 2>/dev/null | grep -qx 'options xen_ptswap mode=auto'; then
	pass modprobe-defaults
else
	fail modprobe-defaults "modprobe -c has no 'options xen_ptswap mode=auto' (/usr/lib/modprobe.d/xen-ptswap.conf)"
fi
ml=/etc/modules-load.d/xen-ptswap.conf
if [ -f "$ml" ] && grep -qx '#xen_ptswap' "$ml" && ! grep -v '^[[:space:]]*#' "$ml" | grep -q '[^[:space:]]'; then
	pass modules-load-disabled
else
	fail modules-load-disabled "$ml missing, or it names a module outside a comment"
fi

# --- the module, with the package's defaults ----------------------------------
dmesg_before=$(dmesg | wc -l)
if modprobe xen_ptswap 2>"$WORK/modprobe.err" && xps_loaded; then
	pass modprobe
	mode=$(cat /sys/module/xen_ptswap/parameters/mode 2>/dev/null)
	if [ "$mode" = "$want" ]; then
		pass mode-auto
	else
		fail mode-auto "/sys/module/xen_ptswap/parameters/mode is '$mode', want $want on Xen ${XPS_LAB_XEN:-?}"
	fi
	line=$(dmesg | tail -n +"$((dmesg_before + 1))" | grep -m1 'xen_ptswap: installed, mode=')
	info "kernel log: ${line:-no installed line}"
	if [[ $line =~ xen_ptswap:\ installed,\ mode=$want( |$) ]]; then
		pass mode-logged
	else
		fail mode-logged "no 'xen_ptswap: installed, mode=$want' line in the kernel log (got '${line}')"
	fi
else
	fail modprobe "$(tr '\n' ' ' <"$WORK/modprobe.err") $(dmesg | tail -n +"$((dmesg_before + 1))" | grep -m2 xen_ptswap | tr '\n' ' ')"
fi

# --- the status command ------------------------------------------------------
if [ ! -x /usr/sbin/xen-ptswap ]; then
	fail status "no /usr/sbin/xen-ptswap after the install"
else
	timeout -k 10 120 xen-ptswap status >"$WORK/status.out" 2>&1
	rc=$?
	sed 's/^/# status: /' "$WORK/status.out"
	if [ $rc = 0 ]; then pass status; else fail status "exit status $rc: $(grep -m2 FAIL "$WORK/status.out" | tr '\n' ' ')"; fi

	timeout -k 10 120 xen-ptswap status --json >"$WORK/status.json" 2>"$WORK/status.json.err"
	rc=$?
	if [ $rc != 0 ]; then
		fail status-json "exit status $rc: $(head -c 300 "$WORK/status.json.err")"
	elif ! python3 -m json.tool "$WORK/status.json" >/dev/null 2>"$WORK/json.err"; then
		fail status-json "not JSON: $(head -n 2 "$WORK/json.err" | tr '\n' ' ')"
	elif ! python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["ok"] is not True)' "$WORK/status.json" 2>/dev/null; then
		fail status-json "its \"ok\" is not true"
	else
		pass status-json
	fi

	if ! xps_loaded || ! stats_snapshot "$WORK/stats.copy"; then
		fail status-stats-copy "cannot run: no consistent copy of $STATS in 50 reads"
	else
		info "stats copy: $(tr '\n' ' ' <"$WORK/stats.copy")"
		timeout -k 10 120 xen-ptswap status --stats "$WORK/stats.copy" >"$WORK/copy.out" 2>&1
		rc=$?
		if [ $rc = 0 ]; then pass status-stats-copy; else fail status-stats-copy "exit status $rc: $(grep -m2 FAIL "$WORK/copy.out" | tr '\n' ' ')"; fi
		awk '$1 == "calls" { $2 = $2 + 1 } { print }' "$WORK/stats.copy" >"$WORK/stats.broken"
		timeout -k 10 120 xen-ptswap status --stats "$WORK/stats.broken" >"$WORK/broken.out" 2>&1
		rc=$?
		sed 's/^/# status --stats (calls + 1): /' "$WORK/broken.out" | grep FAIL
		if [ $rc = 1 ] && grep -Eq 'FAIL.*(^|[^a-z_])calls([^a-z_]|$)' "$WORK/broken.out"; then
			pass status-broken-calls
		else
			fail status-broken-calls "exit status $rc (want 1) and a FAIL line naming calls: $(grep -m2 FAIL "$WORK/broken.out" | tr '\n' ' ')"
		fi
	fi
fi

if xps_loaded; then
	if rmmod xen_ptswap 2>"$WORK/rmmod.err" && ! xps_loaded; then
		pass rmmod
	else
		fail rmmod "$(tr '\n' ' ' <"$WORK/rmmod.err")"
	fi
fi

# The packaged A/B runner: a short MADV_DONTNEED A/B of the module unloaded
# and in the mode auto chose (it loads and unloads the module itself).
# What it checks is that the package's wrapper finds its benchmarks and
# the module, not the times.
ab_ran=0
if xps_loaded; then
	fail ab-run "cannot run: xen_ptswap is still loaded (the rmmod check failed)"
elif [ -x /usr/sbin/xen-ptswap-ab-run ]; then
	ab_ran=1
	timeout -k 10 600 xen-ptswap-ab-run --bench madv --size 16M --rounds 1 --warmup 0 \
		--variants "unloaded,$want" --bpftrace off --png none --csv "$WORK/ab.csv" \
		>"$WORK/ab.out" 2>&1
	rc=$?
	got=$(awk -F, 'NR > 1 && $4 > 0 { print $2 }' "$WORK/ab.csv" 2>/dev/null | sort -u | tr '\n' ' ')
	if [ $rc = 0 ] && [ "$got" = "$(printf '%s\n' unloaded "$want" | sort -u | tr '\n' ' ')" ]; then
		pass ab-run
		grep -E "^ *(variant|unloaded|$want) " "$WORK/ab.out" | sed 's/^/# ab-run: /'
	else
		fail ab-run "exit status $rc, variants with a time in its CSV: '$got' (want unloaded and $want): $(tail -n 3 "$WORK/ab.out" | tr '\n' ' ')"
	fi
else
	fail ab-run "no /usr/sbin/xen-ptswap-ab-run after the install"
fi
if [ $ab_ran = 0 ]; then
	fail ab-run-unloads "cannot run: xen-ptswap-ab-run did not run"
elif xps_loaded; then
	fail ab-run-unloads "xen_ptswap still loaded after xen-ptswap-ab-run"
	rmmod xen_ptswap 2>/dev/null
else
	pass ab-run-unloads
fi

# --- apt-get remove ----------------------------------------------------------
if timeout -k 10 600 "${APT[@]}" remove "${PKGS[@]}" >"$WORK/remove.out" 2>&1; then
	pass remove
else
	fail remove "$(tail -n 4 "$WORK/remove.out" | tr '\n' ' ')"
fi
left=$(find /usr/src -maxdepth 1 -name "$NAME-*" | tr '\n' ' ')
if [ -z "$left" ]; then pass remove-src; else fail remove-src "left: $left"; fi
left="$(dkms status 2>/dev/null | grep "^${NAME}[,/]" | tr '\n' ' ')$(find /var/lib/dkms -maxdepth 1 -name "$NAME")"
if [ -z "$left" ]; then pass remove-dkms; else fail remove-dkms "left: $left"; fi
left=$(find "$MODS" -name 'xen_ptswap.ko*' 2>/dev/null | tr '\n' ' ')
if [ -z "$left" ]; then pass remove-ko; else fail remove-ko "left: $left"; fi
left=$(for f in /usr/sbin/xen-ptswap /usr/sbin/xen-ptswap-ab-run /usr/sbin/xen_ptswap.bt \
	/usr/sbin/unmap_page_range.bt /usr/libexec/xen-ptswap /usr/share/doc/xen-ptswap-tools \
	/usr/share/doc/xen-ptswap-dkms; do [ -e "$f" ] && echo "$f"; done | tr '\n' ' ')
if [ -z "$left" ]; then pass remove-tools; else fail remove-tools "left: $left"; fi
if [ ! -e /usr/lib/modprobe.d/xen-ptswap.conf ]; then
	pass remove-modprobe-conf
else
	fail remove-modprobe-conf "/usr/lib/modprobe.d/xen-ptswap.conf is still there"
fi
if [ -f /etc/modules-load.d/xen-ptswap.conf ]; then
	pass remove-conffile-kept
else
	fail remove-conffile-kept "apt-get remove deleted /etc/modules-load.d/xen-ptswap.conf (a conffile: only purge should)"
fi
s_dkms=$(dpkg_abbrev xen-ptswap-dkms) s_tools=$(dpkg_abbrev xen-ptswap-tools)
info "dpkg after remove: xen-ptswap-dkms '${s_dkms}', xen-ptswap-tools '${s_tools}'"
case $s_dkms:$s_tools in
rc:|rc:un) pass remove-dpkg-state ;;
*) fail remove-dpkg-state "xen-ptswap-dkms '$s_dkms' (want rc), xen-ptswap-tools '$s_tools' (want nothing)" ;;
esac

# --- apt-get purge -----------------------------------------------------------
if timeout -k 10 600 "${APT[@]}" purge "${PKGS[@]}" >"$WORK/purge.out" 2>&1; then
	pass purge
else
	fail purge "$(tail -n 4 "$WORK/purge.out" | tr '\n' ' ')"
fi
if [ ! -e /etc/modules-load.d/xen-ptswap.conf ]; then
	pass purge-conffile
else
	fail purge-conffile "/etc/modules-load.d/xen-ptswap.conf is still there"
fi
left=$(for p in "${PKGS[@]}"; do s=$(dpkg_abbrev "$p"); [ -z "$s" ] || [ "$s" = un ] || echo "$p=$s"; done
	ls /var/lib/dpkg/info/xen-ptswap-* 2>/dev/null)
if [ -z "$left" ]; then pass purge-dpkg; else fail purge-dpkg "dpkg still knows: $(echo "$left" | tr '\n' ' ')"; fi

restore_lab_ko
end_checks "$KLOG"
[ -d /xps-lab ] && cp -r "$WORK" /xps-lab/package 2>/dev/null
note "package suite: $((SECONDS - t_suite)) s"
finish
