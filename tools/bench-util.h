/* SPDX-License-Identifier: MIT */
/*
 * bench-util.h - helpers shared by the xen-ptswap benchmarks in tools/.
 *
 * Sizes are parsed with K/M/G suffixes (powers of 1024); times are taken
 * with clock_gettime(CLOCK_MONOTONIC) and reported in milliseconds.  Hook
 * commands (--pre/--post) run through /bin/sh with posix_spawn(), which
 * glibc implements with clone(CLONE_VM|CLONE_VFORK): the benchmark's page
 * tables are not copied, so a hook costs no PTE writes in the measured mm.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Exit status for "this program cannot run here" (automake's skip code). */
#define BENCH_EXIT_CANNOT_RUN	77

/* Parse "256M", "4G", "65536" (bytes); returns 0 on success, -1 on error. */
int parse_size(const char *s, uint64_t *out);

/* Milliseconds between two CLOCK_MONOTONIC readings. */
double ms_between(const struct timespec *a, const struct timespec *b);

/* clock_gettime(CLOCK_MONOTONIC), aborting on failure. */
void now(struct timespec *ts);

/*
 * Switch transparent huge pages off for this process (PR_SET_THP_DISABLE).
 * Returns 1 if the kernel accepted it, 0 if the kernel has no such control
 * (no THP support: nothing to switch off).
 */
int thp_disable_process(void);

/* MADV_NOHUGEPAGE on a range where the kernel knows it; 0 or -1. */
int thp_disable_range(void *addr, size_t len);

/* Bytes of AnonHugePages in this process (/proc/self/smaps_rollup), -1 if unknown. */
long long anon_huge_bytes(void);

/*
 * Run CMD with /bin/sh -c, with BENCH_RUN=<run> and BENCH_PHASE=<phase> in
 * its environment, and wait for it.  Returns its exit status, or -1.
 */
int run_hook(const char *cmd, int run, const char *phase);

/* Sort a copy of v[0..n) and return its median (n > 0). */
double median(const double *v, size_t n);

/* "MiB" text for a byte count, into buf. */
const char *human_size(uint64_t bytes, char *buf, size_t len);

#endif /* BENCH_UTIL_H */
