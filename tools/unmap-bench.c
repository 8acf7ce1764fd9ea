// SPDX-License-Identifier: MIT
/*
 * unmap-bench.c - time one madvise(MADV_DONTNEED) or one munmap() over a
 * large private anonymous mapping: the PTE-clearing microbenchmark; or the
 * exit of a process that holds such a mapping.
 *
 * Built twice by tools/Makefile: madv-bench (default op dontneed) and
 * munmap-bench (default op munmap).
 *
 * Usage: madv-bench [-s SIZE] [-r RUNS] [-o dontneed|munmap|exit] [-c] [-m]
 *                   [--pre CMD] [--post CMD]
 *   -s SIZE   bytes to map, K/M/G suffixes (powers of 1024); default 256M
 *   -r RUNS   repetitions, each on a fresh mapping; default 3
 *   -o OP     dontneed: time madvise(MADV_DONTNEED) of the whole range;
 *             munmap: time munmap() of the whole range;
 *             exit: a child process maps and touches the range, then the
 *             time from telling it to _exit() to waitpid()'s return: the
 *             exit's teardown of the whole mm (on Xen PV, xen_exit_mmap()
 *             unpins the page tables first, so the zap writes ordinary
 *             memory and neither traps nor calls ptep_get_and_clear():
 *             its time over a native boot's is the PV floor of a zap
 *             without any clear), plus two wakeups
 *   -c        clean entries: map shared anonymous memory (shmem) and fault
 *             every page in by reading it, so every L1 entry is present,
 *             writable and clean (the entries xen_ptswap may not queue)
 *   -m        machine-readable output: one "result ..." line per run and
 *             one "summary ..." line, as key=value pairs
 *   --pre CMD, --post CMD
 *             shell command run just before / just after the timed call
 *             (outside the timed interval), with BENCH_RUN=<run> and
 *             BENCH_PHASE=pre|post in its environment; used by ab-run to
 *             read xenperf counters around exactly the timed call.
 *
 * Method (the public MADV_DONTNEED figures were taken this way): mmap SIZE
 * of private anonymous read/write memory, switch transparent huge pages off
 * (prctl(PR_SET_THP_DISABLE) and MADV_NOHUGEPAGE: Xen PV has no huge pages,
 * so a native comparison must not have them either), write one byte to
 * every page so every L1 entry is present, then time a single call with
 * CLOCK_MONOTONIC.  On a Xen PV Dom0 without the module every PTE that call
 * clears is one trap and one ptwr emulation in Xen.
 *
 * Output: milliseconds per run (wall time of the one call), the page count
 * (SIZE / page size = the number of L1 entries cleared) and the median.
 * Errors: bad arguments exit 2; a failing mmap/madvise/munmap exits 1; if
 * huge pages could not be kept off the run still completes but reports
 * thp=on and a warning, since its figure is not comparable.
 */
#define _GNU_SOURCE
#include "bench-util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef BENCH_DEFAULT_OP
#define BENCH_DEFAULT_OP "dontneed"
#endif

enum op { OP_DONTNEED, OP_MUNMAP, OP_EXIT };

/* The usage text, after "usage: PROG " (see bench_getopt()). */
static const char usage[] =
	"[-s SIZE] [-r RUNS] [-o dontneed|munmap|exit] [-c] [-m] [--pre CMD] [--post CMD]\n"
	"  time one madvise(MADV_DONTNEED) or munmap() of SIZE bytes of touched\n"
	"  private anonymous memory (THP off; -c: shared memory read in, clean\n"
	"  writable entries), or the exit of a process holding them (-o exit);\n"
	"  prints milliseconds per run\n";

/*
 * Map @size bytes and touch every page: written, or read (@clean: shared
 * memory read in, writable clean entries).  Return: the mapping, or
 * MAP_FAILED with errno set.  *@huge: bytes in transparent huge pages.
 */
static volatile char *map_touched(uint64_t size, long psize, int clean, long long *huge)
{
	volatile char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
				(clean ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return p;
	/* Only fails on kernels without THP: nothing to switch off then. */
	(void)thp_disable_range((void *)p, size);
	for (uint64_t off = 0; off < size; off += (uint64_t)psize) {
		if (clean)
			(void)p[off];	/* read fault: writable, clean */
		else
			p[off] = 1;
	}
	*huge = anon_huge_bytes();
	return p;
}

/*
 * Start a child that maps and touches @size bytes (map_touched()), says
 * how many of them are in huge pages (*@huge) and waits to be told to
 * exit.  Return: 0 with its pid in *@pid and the pipe end that tells it
 * in *@go; -1 having said why (a system call failed, or the child's mmap).
 */
static int child_start(const char *prog, uint64_t size, long psize, int clean,
		       long long *huge, pid_t *pid, int *go)
{
	int ready[2], gop[2], status;
	char byte;

	if (pipe(ready) || pipe(gop)) {
		perror("pipe");
		return -1;
	}
	*pid = fork();
	if (*pid < 0) {
		perror("fork");
		return -1;
	}
	if (*pid == 0) {
		long long h = -1;

		close(ready[0]);
		close(gop[1]);	/* a parent that dies leaves the read at EOF */
		if (map_touched(size, psize, clean, &h) == MAP_FAILED)
			h = -2;
		if (write(ready[1], &h, sizeof(h)) != (ssize_t)sizeof(h) ||
		    read(gop[0], &byte, 1) != 1)
			_exit(1);
		_exit(h == -2 ? 1 : 0);
	}
	close(ready[1]);
	close(gop[0]);
	if (read(ready[0], huge, sizeof(*huge)) != (ssize_t)sizeof(*huge) || *huge == -2) {
		fprintf(stderr, "%s: the child could not map and touch %llu bytes\n",
			prog, (unsigned long long)size);
		close(ready[0]);
		close(gop[1]);
		waitpid(*pid, &status, 0);
		return -1;
	}
	close(ready[0]);
	*go = gop[1];
	return 0;
}

/*
 * Tell the child of child_start() to exit and reap it: the timed part of
 * op exit.  Return: 0, or -1 having said why.
 */
static int child_exit(const char *prog, pid_t pid, int go)
{
	char byte = 0;
	int status;

	if (write(go, &byte, 1) != 1 || waitpid(pid, &status, 0) != pid) {
		perror("exit");
		close(go);
		return -1;
	}
	close(go);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s: the child did not exit cleanly (status %#x)\n", prog, status);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'r' },
		{ "op", required_argument, NULL, 'o' },
		{ "clean", no_argument, NULL, 'c' },
		{ "machine", no_argument, NULL, 'm' },
		{ "pre", required_argument, NULL, 'P' },
		{ "post", required_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct bench_cli cli = {
		.optstring = "s:r:o:cmh", .longopts = longopts, .usage = usage,
		.size = 256ULL << 20, .runs = 3, .max_runs = 100000,
	};
	const char *opname = BENCH_DEFAULT_OP;
	uint64_t size;
	long runs, psize = sysconf(_SC_PAGESIZE);
	int c, thp_ctl, clean = 0;
	enum op op;
	double *ms;
	char hs[32];

	while ((c = bench_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'o':
			opname = optarg;
			break;
		case 'c':
			clean = 1;
			break;
		}
	}
	size = cli.size;
	runs = cli.runs;
	if (!strcmp(opname, "dontneed")) {
		op = OP_DONTNEED;
	} else if (!strcmp(opname, "munmap")) {
		op = OP_MUNMAP;
	} else if (!strcmp(opname, "exit")) {
		op = OP_EXIT;
	} else {
		fprintf(stderr, "%s: unknown op '%s' (dontneed, munmap or exit)\n",
			argv[0], opname);
		return 2;
	}
	if (psize <= 0)
		psize = 4096;
	if (size % (uint64_t)psize) {
		fprintf(stderr, "%s: size %llu is not a multiple of the page size %ld\n",
			argv[0], (unsigned long long)size, psize);
		return 2;
	}
	ms = calloc((size_t)runs, sizeof(*ms));
	if (!ms) {
		perror("calloc");
		return 1;
	}

	thp_ctl = thp_disable_process();
	if (!cli.machine)
		printf("%s: %s %s%s (%llu pages of %ld B), %ld run(s)\n",
		       argv[0], op == OP_DONTNEED ? "madvise(MADV_DONTNEED) of" :
		       op == OP_MUNMAP ? "munmap() of" : "exit of a process holding",
		       human_size(size, hs, sizeof(hs)),
		       clean ? " of shared memory read in" : "",
		       (unsigned long long)(size / psize), psize, runs);

	for (long r = 0; r < runs; r++) {
		struct timespec t0, t1;
		volatile char *p = NULL;
		long long huge = 0;
		pid_t pid = 0;
		int rc, go = -1;

		if (op == OP_EXIT) {
			if (child_start(argv[0], size, psize, clean, &huge, &pid, &go))
				return 1;
		} else {
			p = map_touched(size, psize, clean, &huge);
			if (p == MAP_FAILED) {
				fprintf(stderr, "%s: mmap of %llu bytes: %s\n", argv[0],
					(unsigned long long)size, strerror(errno));
				return 1;
			}
		}
		if (huge > 0)
			fprintf(stderr,
				"%s: warning: %lld bytes in transparent huge pages: this run is not comparable\n",
				argv[0], huge);

		if (cli.pre && run_hook(cli.pre, (int)r + 1, "pre") != 0)
			fprintf(stderr, "%s: warning: --pre hook failed\n", argv[0]);
		now(&t0);
		if (op == OP_EXIT)
			rc = child_exit(argv[0], pid, go);	/* says why itself */
		else if (op == OP_DONTNEED)
			rc = madvise((void *)p, size, MADV_DONTNEED);
		else
			rc = munmap((void *)p, size);
		now(&t1);
		if (rc) {
			if (op != OP_EXIT)
				fprintf(stderr, "%s: %s: %s\n", argv[0], opname, strerror(errno));
			return 1;
		}
		if (cli.post && run_hook(cli.post, (int)r + 1, "post") != 0)
			fprintf(stderr, "%s: warning: --post hook failed\n", argv[0]);
		if (op == OP_DONTNEED && munmap((void *)p, size)) {
			perror("munmap");
			return 1;
		}
		ms[r] = ms_between(&t0, &t1);
		if (cli.machine)
			fprintf(stdout,
				"result op=%s%s bytes=%llu pages=%llu page_size=%ld run=%ld ms=%.3f thp=%s\n",
				opname, clean ? " clean=1" : "", (unsigned long long)size,
				(unsigned long long)(size / psize), psize, r + 1, ms[r],
				huge > 0 ? "on" : "off");
		else
			printf("run %ld: %.3f ms%s\n", r + 1, ms[r],
			       huge > 0 ? " (THP ON: not comparable)" : "");
		fflush(stdout);
	}

	{
		double mn = ms[0], mx = ms[0], md = median(ms, (size_t)runs);

		for (long r = 1; r < runs; r++) {
			if (ms[r] < mn)
				mn = ms[r];
			if (ms[r] > mx)
				mx = ms[r];
		}
		if (cli.machine)
			fprintf(stdout,
				"summary op=%s bytes=%llu pages=%llu runs=%ld median_ms=%.3f min_ms=%.3f max_ms=%.3f thp_ctl=%s\n",
				opname, (unsigned long long)size,
				(unsigned long long)(size / psize), runs, md, mn, mx,
				thp_ctl ? "prctl" : "none");
		else
			printf("median %.3f ms, min %.3f ms, max %.3f ms (%.1f ns per PTE)\n",
			       md, mn, mx, md * 1e6 / (double)(size / psize));
	}
	free(ms);
	return 0;
}
