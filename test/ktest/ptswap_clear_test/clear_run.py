#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""clear_run.py SCENARIO: run one scenario of ptswap_clear_test.

SCENARIO is "swap" (S1: a writable, clean entry, from a read fault of a
shared page), "defer" (S2: a writable, dirty entry, the page written) or
"twice" (S3: S2's entry cleared twice in one lazy MMU section), "ro"
(S4: a read-only, clean entry: read fault, then mprotect(PROT_READ)) or
"unlazy" (S5: S2's entry cleared outside lazy MMU mode).
Maps one shared anonymous (shmem) page, faults it in, and writes
"ADDR MODE SCENARIO" to /sys/kernel/debug/ptswap_clear_test/run, MODE being
xen_ptswap's mode parameter; the module checks what the installed
ptep_get_and_clear does (see ptswap_clear_test.c).  Around the write it
reads /sys/kernel/debug/xen_ptswap/stats and checks that the write made
exactly one call of xen_ptswap's op, of the expected class: for swap,
swapped in modes batched and sync and native in mode noswap; for defer,
deferred in modes batched and noswap and swapped in mode sync; never
unpinned.  For twice, two calls: the first as for defer, the second
none, and in modes batched and noswap one readback (the op issued its
own queued clear and read the entry again).  For ro, one call, swapped
in modes batched and sync, native in mode noswap: never deferred; the
same for unlazy (nothing is queued outside lazy MMU mode).  Other processes may clear PTEs meanwhile, so a
mismatch of the counters alone is retried, up to 3 attempts.  Afterwards
the page must still hold its data.  A page the module turns down
(EAGAIN: __pte() would not translate its frame, so a translated return
value would go unnoticed) stays mapped and another one is tried, up to 256.

Prints one line, "ok: DETAIL" or "fail: WHY"; exit status 0 or 1
(2: cannot run).
"""
import ctypes
import errno
import mmap
import os
import sys

RUN = "/sys/kernel/debug/ptswap_clear_test/run"
LIBC = ctypes.CDLL(None, use_errno=True)
STATS = "/sys/kernel/debug/xen_ptswap/stats"
MODE = "/sys/module/xen_ptswap/parameters/mode"
ATTEMPTS = 3
MAX_PAGES = 256


def read_raw(path):
    """The file's content, read with one fd and no buffered file object."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def parse_stats(raw):
    """The counters of a stats file's text, without its first line ("mode NAME")."""
    return {k: int(v) for k, v in (line.split() for line in raw.decode().splitlines())
            if k != "mode"}


# Pages the module turned down (-EAGAIN: their frame is not translated by
# __pte()), kept mapped so that the next page gets another frame.
kept = []


def attempt(scenario, mode):
    """One run: (errno of the write or 0, counter deltas, data intact)."""
    m = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_SHARED,
                  prot=mmap.PROT_READ | mmap.PROT_WRITE)
    cell = ctypes.c_char.from_buffer(m)
    addr = ctypes.addressof(cell)
    if scenario in ("swap", "ro"):
        byte = m[0]             # read fault: writable (shared), clean
        expect = 0
        if scenario == "ro" and LIBC.mprotect(ctypes.c_void_p(addr), mmap.PAGESIZE,
                                              mmap.PROT_READ):
            raise OSError(ctypes.get_errno(), "mprotect(PROT_READ)")
    else:
        m[0] = 0x5a             # write fault: writable, dirty
        byte = m[0]
        expect = 0x5a
    line = ("%x %s %s\n" % (addr, mode, scenario)).encode()
    fd = os.open(RUN, os.O_WRONLY)
    s0 = read_raw(STATS)
    try:
        os.write(fd, line)
        err = 0
    except OSError as e:
        err = e.errno
    s1 = read_raw(STATS)
    os.close(fd)
    intact = m[0] == expect and byte == expect
    if err == errno.EAGAIN:
        kept.append((m, cell))
        return err, {}, True
    del cell
    m.close()
    a, b = parse_stats(s0), parse_stats(s1)
    return err, {k: b[k] - a.get(k, 0) for k in b}, intact


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("swap", "defer", "twice", "ro", "unlazy"):
        print("usage: clear_run.py swap|defer|twice|ro|unlazy", file=sys.stderr)
        return 2
    scenario = sys.argv[1]
    try:
        with open(MODE) as f:
            mode = f.read().strip()
    except OSError as e:
        print("fail: cannot read %s: %s" % (MODE, e.strerror))
        return 2
    if scenario in ("swap", "ro", "unlazy"):
        want = {"calls": 1, "native" if mode == "noswap" else "swapped": 1}
    else:
        want = {"calls": 1, "swapped" if mode == "sync" else "deferred": 1}
    if scenario == "twice":
        want["calls"] = 2
        want["none"] = 1
        if mode != "sync":
            want["readback"] = 1
    wanted = " ".join("%s=+%d" % kv for kv in want.items())
    why = ""
    i = 1
    while i <= ATTEMPTS:
        err, d, intact = attempt(scenario, mode)
        if err == errno.EAGAIN:
            if len(kept) < MAX_PAGES:
                continue
            print("fail: %d pages in a row have frames __pte() does not translate"
                  % MAX_PAGES)
            return 1
        if err:
            print("fail: write to %s: %s (the module's FAIL lines say why)"
                  % (RUN, os.strerror(err)))
            return 1
        if not intact:
            print("fail: the page lost its data")
            return 1
        shown = " ".join("%s=%+d" % (k, v) for k, v in d.items() if v)
        if d.get("unpinned", 0):
            why = "xen_ptswap counted %d unpinned clear(s) on a pinned table (%s)" % (
                d["unpinned"], shown)
            if d.get("calls", 0) == want["calls"]:
                break
        elif all(d.get(k, 0) == v for k, v in want.items()):
            print("ok: mode %s, xen_ptswap counters %s (attempt %d, %d page(s) turned down)"
                  % (mode, shown, i, len(kept)))
            return 0
        else:
            why = "xen_ptswap counters %s, want %s" % (shown or "unchanged", wanted)
        i += 1
    print("fail: mode %s: %s (%d attempts)" % (mode, why, min(i, ATTEMPTS)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
