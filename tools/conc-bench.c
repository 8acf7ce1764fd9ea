// SPDX-License-Identifier: MIT
/*
 * conc-bench.c - K callers clearing PTEs at once: how per-caller time
 * changes with 1, 2, 4 concurrent madvise(MADV_DONTNEED) or munmap() calls.
 *
 * Usage: conc-bench [-s SIZE] [-k LIST] [-r RUNS] [-o dontneed|munmap]
 *                   [-t procs|threads] [-m]
 *   -s SIZE   bytes per caller, K/M/G suffixes; default 64M
 *   -k LIST   comma-separated caller counts; default 1,2,4
 *   -r RUNS   repetitions per caller count; default 3
 *   -o OP     dontneed (default) or munmap
 *   -t MODE   procs (default): K processes, one mm each, no shared lock in
 *             Linux, so only Xen (page-table page locks, the emulator, the
 *             vCPUs) is shared; threads: K threads of one mm (munmap then
 *             serialises on mmap_lock, MADV_DONTNEED holds it shared)
 *   -m        machine-readable: "result k=.. run=.. caller=.. ms=.." lines
 *             and one "summary k=.. mean_ms=.. change_pct=.." line per K
 *
 * Method: each caller maps its own SIZE of private anonymous memory (THP
 * off, as in madv-bench), writes one byte per page, waits at a barrier so
 * all K start together, then times its own single call with
 * CLOCK_MONOTONIC.  The table reports, per K, the mean time one caller's
 * call took and its change against K=1, the shape used to report the
 * lockless SMP-call work's 1/2/4-caller results.  More callers than CPUs
 * share CPUs, so their wall time includes waiting for one.
 * Errors: bad arguments exit 2; a failing system call exits 1.
 */
#define _GNU_SOURCE
#include "bench-util.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CALLERS	64
#define MAX_KS		16

struct shared {
	pthread_barrier_t ready;	/* all callers have touched their pages */
	double ms[MAX_CALLERS];		/* per-caller time of the one call */
	int failed[MAX_CALLERS];	/* errno of a failed call, 0 if fine */
};

struct caller {
	struct shared *sh;
	int idx;
	uint64_t size;
	int munmap_op;
	long psize;
};

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	struct timespec t0, t1;
	volatile char *p;
	int rc;

	p = mmap(NULL, c->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		c->sh->failed[c->idx] = errno;
		pthread_barrier_wait(&c->sh->ready);
		return NULL;
	}
	(void)thp_disable_range((void *)p, c->size);
	for (uint64_t off = 0; off < c->size; off += (uint64_t)c->psize)
		p[off] = 1;
	pthread_barrier_wait(&c->sh->ready);
	now(&t0);
	rc = c->munmap_op ? munmap((void *)p, c->size)
			  : madvise((void *)p, c->size, MADV_DONTNEED);
	now(&t1);
	if (rc)
		c->sh->failed[c->idx] = errno;
	c->sh->ms[c->idx] = ms_between(&t0, &t1);
	if (!c->munmap_op)
		munmap((void *)p, c->size);
	return NULL;
}

/* One round with k callers; fills sh->ms[0..k).  Returns 0 or -1. */
static int round_k(struct shared *sh, int k, int threads, uint64_t size,
		   int munmap_op, long psize)
{
	struct caller cs[MAX_CALLERS];
	pthread_t tids[MAX_CALLERS];
	pthread_barrierattr_t ba;
	pid_t pids[MAX_CALLERS];
	int err = 0;

	memset(sh->failed, 0, sizeof(sh->failed));
	pthread_barrierattr_init(&ba);
	if (!threads)
		pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	if (pthread_barrier_init(&sh->ready, &ba, (unsigned int)k)) {
		fprintf(stderr, "pthread_barrier_init failed\n");
		return -1;
	}
	pthread_barrierattr_destroy(&ba);

	for (int i = 0; i < k; i++) {
		cs[i] = (struct caller){ sh, i, size, munmap_op, psize };
		if (threads) {
			if (pthread_create(&tids[i], NULL, caller_main, &cs[i])) {
				fprintf(stderr, "pthread_create failed\n");
				exit(1);
			}
		} else {
			/* Forked before any large mapping exists: cheap to copy. */
			pids[i] = fork();
			if (pids[i] < 0) {
				perror("fork");
				exit(1);
			}
			if (pids[i] == 0) {
				caller_main(&cs[i]);
				_exit(0);
			}
		}
	}
	for (int i = 0; i < k; i++) {
		if (threads) {
			pthread_join(tids[i], NULL);
		} else {
			int st;

			if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				err = -1;
		}
	}
	pthread_barrier_destroy(&sh->ready);
	for (int i = 0; i < k; i++) {
		if (sh->failed[i]) {
			fprintf(stderr, "caller %d: %s\n", i, strerror(sh->failed[i]));
			err = -1;
		}
	}
	return err;
}

static int parse_ks(const char *s, int *ks, int *nk)
{
	char *copy = strdup(s), *tok, *save = NULL;

	*nk = 0;
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*end || v < 1 || v > MAX_CALLERS || *nk >= MAX_KS) {
			free(copy);
			return -1;
		}
		ks[(*nk)++] = (int)v;
	}
	free(copy);
	return *nk ? 0 : -1;
}

/*
 * Which of two words @arg is: 0 for @word0, 1 for @word1.  Anything else
 * exits with status 2 after "PROG: unknown WHAT 'ARG'" on stderr.
 */
static int word_arg(const char *prog, const char *what, const char *arg,
		    const char *word0, const char *word1)
{
	if (!strcmp(arg, word1))
		return 1;
	if (strcmp(arg, word0)) {
		fprintf(stderr, "%s: unknown %s '%s'\n", prog, what, arg);
		exit(2);
	}
	return 0;
}

/* The usage text, after "usage: PROG " (see bench_getopt()). */
static const char usage[] =
	"[-s SIZE] [-k 1,2,4] [-r RUNS] [-o dontneed|munmap] [-t procs|threads] [-m]\n"
	"  K callers each clear SIZE of touched anonymous memory at once;\n"
	"  prints mean per-caller milliseconds and the change against K=1\n";

int main(int argc, char **argv)
{
	struct bench_cli cli = {
		.optstring = "s:k:r:o:t:mh", .usage = usage,
		.size = 64ULL << 20, .runs = 3, .max_runs = 10000,
	};
	int ks[MAX_KS] = { 1, 2, 4 }, nk = 3, threads = 0, munmap_op = 0, c;
	uint64_t size;
	long runs, psize = sysconf(_SC_PAGESIZE);
	double means[MAX_KS], base = 0;
	struct shared *sh;
	char hs[32];

	while ((c = bench_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'k':
			if (parse_ks(optarg, ks, &nk)) {
				fprintf(stderr,
					"%s: bad caller list '%s' (1..%d, comma-separated)\n",
					argv[0], optarg, MAX_CALLERS);
				return 2;
			}
			break;
		case 'o':
			if (word_arg(argv[0], "op", optarg, "dontneed", "munmap"))
				munmap_op = 1;
			break;
		case 't':
			if (word_arg(argv[0], "mode", optarg, "procs", "threads"))
				threads = 1;
			break;
		}
	}
	size = cli.size;
	runs = cli.runs;
	if (psize <= 0)
		psize = 4096;
	if (size % (uint64_t)psize) {
		fprintf(stderr, "%s: size is not a multiple of the page size %ld\n",
			argv[0], psize);
		return 2;
	}
	thp_disable_process();	/* inherited by the forked callers */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (!cli.machine)
		fprintf(stdout,
			"%s: %s of %s (%llu pages) per caller, %s, %ld run(s) per K, %ld CPU(s) online\n",
			argv[0], munmap_op ? "munmap()" : "madvise(MADV_DONTNEED)",
			human_size(size, hs, sizeof(hs)),
			(unsigned long long)(size / psize), threads ? "threads" : "processes",
			runs, sysconf(_SC_NPROCESSORS_ONLN));

	for (int j = 0; j < nk; j++) {
		int k = ks[j];
		size_t n = 0;
		double *all = calloc((size_t)runs * (size_t)k, sizeof(*all));
		double sum = 0, mn = 0, mx = 0;

		if (!all) {
			perror("calloc");
			return 1;
		}
		for (long r = 0; r < runs; r++) {
			if (round_k(sh, k, threads, size, munmap_op, psize))
				return 1;
			for (int i = 0; i < k; i++) {
				double v = sh->ms[i];

				if (cli.machine)
					printf("result k=%d run=%ld caller=%d pages=%llu ms=%.3f\n",
					       k, r + 1, i, (unsigned long long)(size / psize), v);
				if (!n || v < mn)
					mn = v;
				if (!n || v > mx)
					mx = v;
				all[n++] = v;
				sum += v;
			}
		}
		means[j] = sum / (double)n;
		if (j == 0)
			base = means[0];
		if (cli.machine) {
			fprintf(stdout,
				"summary k=%d mode=%s op=%s pages=%llu mean_ms=%.3f median_ms=%.3f min_ms=%.3f max_ms=%.3f change_pct=%.1f\n",
				k, threads ? "threads" : "procs", munmap_op ? "munmap" : "dontneed",
				(unsigned long long)(size / psize), means[j], median(all, n),
				mn, mx, base > 0 ? (means[j] - base) * 100.0 / base : 0.0);
		} else {
			if (j == 0)
				printf("%8s %14s %12s %10s %10s %12s\n", "callers", "mean ms/call",
				       "median ms", "min ms", "max ms",
				       k == 1 ? "vs 1 caller" : "vs first K");
			printf("%8d %14.3f %12.3f %10.3f %10.3f %+11.1f%%\n", k, means[j],
			       median(all, n), mn, mx,
			       base > 0 ? (means[j] - base) * 100.0 / base : 0.0);
		}
		fflush(stdout);
		free(all);
	}
	munmap(sh, sizeof(*sh));
	return 0;
}
