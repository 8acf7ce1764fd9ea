// SPDX-License-Identifier: MIT
/*
 * xps_dontneed - map anonymous memory, fault every page in, release it all
 * with one madvise(MADV_DONTNEED), and report what that took.
 *
 * Usage: xps_dontneed [-m MIB] [-n ROUNDS] [-s] [-r] [-c]
 *   -m MIB     size of the mapping in MiB (default 256)
 *   -n ROUNDS  rounds of fault-in + MADV_DONTNEED (default 1; 0: forever)
 *   -s         MAP_SHARED anonymous memory (shmem) instead of private
 *   -r         fault pages in by reading instead of writing
 *   -c         check data: each page holds its round and index before the
 *              release; after it, private pages must read as zero and
 *              shared pages must still hold their data (-c implies writes)
 *
 * Prints one line per round:
 *   pages=<pages released> ms=<madvise wall time> minflt=<minor faults of
 *   the round>
 * Exit status: 0 on success, 1 if a data check failed, 2 on a usage or
 * system call error.  Used by test/suites/module.sh; the method follows
 * the public MADV_DONTNEED microbenchmark (DESIGN.md, "Measuring").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The first 8 bytes of page @i of the mapping at @p. */
static unsigned long long *word(unsigned char *p, unsigned long i, long psz)
{
	return (unsigned long long *)(p + i * psz);
}

int main(int argc, char **argv)
{
	unsigned long mib = 256, rounds = 1, round, i, pages;
	int shared = 0, readonly = 0, check = 0, opt;
	long psz = sysconf(_SC_PAGESIZE);
	unsigned char sink = 0;
	unsigned char *p;
	size_t len;

	while ((opt = getopt(argc, argv, "m:n:src")) != -1) {
		switch (opt) {
		case 'm':
			mib = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 's':
			shared = 1;
			break;
		case 'r':
			readonly = 1;
			break;
		case 'c':
			check = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-m MIB] [-n ROUNDS] [-s] [-r] [-c]\n",
				argv[0]);
			return 2;
		}
	}
	if (!mib) {
		fprintf(stderr, "xps_dontneed: -m must be > 0\n");
		return 2;
	}
	len = mib << 20;
	pages = len / psz;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "xps_dontneed: mmap %lu MiB: %s\n", mib,
			strerror(errno));
		return 2;
	}

	for (round = 0; rounds == 0 || round < rounds; round++) {
		long flt0 = minflt();
		double t0;

		for (i = 0; i < pages; i++) {
			if (check)
				*word(p, i, psz) = (round << 32) | i;
			else if (readonly)
				sink += __atomic_load_n(p + i * psz, __ATOMIC_RELAXED);
			else
				p[i * psz] = 1;
		}
		for (i = 0; check && i < pages; i++) {
			if (*word(p, i, psz) != ((round << 32) | i)) {
				fprintf(stderr, "xps_dontneed: round %lu page %lu: %s\n",
					round, i, "data lost before the release");
				return 1;
			}
		}
		t0 = now_ms();
		if (madvise(p, len, MADV_DONTNEED)) {
			fprintf(stderr, "xps_dontneed: madvise: %s\n",
				strerror(errno));
			return 2;
		}
		printf("pages=%lu ms=%.3f minflt=%ld\n", pages, now_ms() - t0,
		       minflt() - flt0);
		fflush(stdout);
		for (i = 0; check && i < pages; i++) {
			unsigned long long want = shared ? ((round << 32) | i) : 0;

			if (*word(p, i, psz) != want) {
				fprintf(stderr, "xps_dontneed: round %lu page %lu:",
					round, i);
				fprintf(stderr, " %#llx after release, want %#llx\n",
					*word(p, i, psz), want);
				return 1;
			}
		}
		if (check && !shared && madvise(p, len, MADV_DONTNEED)) {
			fprintf(stderr, "xps_dontneed: madvise: %s\n",
				strerror(errno));
			return 2;
		}
	}
	return sink & 0;
}
