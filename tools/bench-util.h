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

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Exit status for "this program cannot run here" (automake's skip code). */
#define BENCH_EXIT_CANNOT_RUN	77

/**
 * struct bench_cli - the command line of one benchmark, for bench_getopt()
 * @optstring: short options as for getopt(); those of "s:r:mh" among them
 *	are handled by bench_getopt() itself
 * @longopts: long options as for getopt_long(), or NULL for none; values
 *	's', 'r', 'm', 'h', 'P' (--pre CMD) and 'Q' (--post CMD) are handled
 *	by bench_getopt() itself (see bench_hook_longopts)
 * @usage: the usage text after "usage: PROG ": the options, then indented
 *	lines saying what the program does, each line ending in "\n"
 * @max_runs: the largest RUNS that -r accepts
 * @size: -s SIZE in bytes, K/M/G suffixes (parse_size()); holds the default
 *	until then
 * @runs: -r RUNS; holds the default until then
 * @machine: set to 1 by -m: machine-readable output
 * @pre: CMD of --pre CMD, NULL if not given
 * @post: CMD of --post CMD, NULL if not given
 */
struct bench_cli {
	const char *optstring;
	const struct option *longopts;
	const char *usage;
	long max_runs;
	uint64_t size;
	long runs;
	int machine;
	const char *pre;
	const char *post;
};

/* Long options of a program that has only the shared ones: --pre, --post, --help. */
extern const struct option bench_hook_longopts[];

/**
 * bench_getopt() - getopt_long() plus the options every benchmark shares
 * @argc: main()'s argc
 * @argv: main()'s argv; argv[0] names the program in messages
 * @cli: the program's options; bench_getopt() stores what the shared
 *	options say in @cli->size, @cli->runs, @cli->machine, @cli->pre and
 *	@cli->post
 *
 * Call it in a loop as getopt_long() and handle the options it returns in
 * a switch; optarg is set as by getopt_long().  It handles -s, -r, -m,
 * --pre and --post itself and does not return them.
 *
 * Exits instead of returning for -h or --help (usage on stdout, status 0),
 * for an unknown option or a missing argument (getopt's message, then usage
 * on stderr, status 2), for a bad -s or -r ("PROG: bad size 'ARG'" or
 * "PROG: bad run count 'ARG'" on stderr, status 2: a size must not be 0,
 * RUNS must be 1 to @cli->max_runs), and, once the options end, for any
 * argument left over (usage on stderr, status 2).
 *
 * Return: the next option the program handles itself, or -1 once every
 * option has been read.
 */
int bench_getopt(int argc, char **argv, struct bench_cli *cli);

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
