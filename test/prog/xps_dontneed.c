// SPDX-License-Identifier: MIT
/*
 * xps_dontneed - map anonymous memory, fault every page in, release it all
 * with one madvise(MADV_DONTNEED), and report what that took.
 *
 * Usage: xps_dontneed [-m MIB] [-n ROUNDS] [-s] [-r] [-c] [-x PREFIX]
 *   -m MIB     size of the mapping in MiB (default 256)
 *   -n ROUNDS  rounds of fault-in + MADV_DONTNEED (default 1; 0: forever)
 *   -s         MAP_SHARED anonymous memory (shmem) instead of private
 *   -r         fault pages in by reading instead of writing
 *   -c         check data: each page holds its round and index before the
 *              release; after it, private pages must read as zero and
 *              shared pages must still hold their data (-c implies writes)
 *   -x PREFIX  right before and right after each madvise(), snapshot
 *              Xen's perf counters (`xenperf -f` into PREFIX.xp0 and
 *              PREFIX.xp1) and the xen_ptswap counters (debugfs stats, into
 *              PREFIX.st0 and PREFIX.st1; empty if the module is not
 *              loaded), so that the deltas cover the release and nothing
 *              else: xenperf is started with posix_spawn() (vfork: no page
 *              table of this process is copied or write-protected)
 *
 * Prints one line per round:
 *   pages=<pages released> ms=<madvise wall time> minflt=<minor faults of
 *   the round> spawnflt=<page faults of the two xenperf runs (-x)>
 * Exit status: 0 on success, 1 if a data check failed, 2 on a usage or
 * system call error.  Used by test/suites/module.sh; the method follows
 * the public MADV_DONTNEED microbenchmark (docs/results.md, "Public
 * figures").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XPS_STATS "/sys/kernel/debug/xen_ptswap/stats"

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

/* Copy @from (if it exists) to @to; an empty @to if it does not. */
static int copy_file(const char *from, const char *to)
{
	char buf[4096];
	int in, out;
	ssize_t n;

	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		return -1;
	in = open(from, O_RDONLY);
	while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (in >= 0)
		close(in);
	return close(out);
}

/*
 * Run `xenperf -f` > @to with posix_spawn(); add its page faults to
 * *@flt.  Returns 0 if it ran and exited 0.
 */
static int xenperf_to(const char *to, long *flt)
{
	static char * const argv[] = { "xenperf", "-f", NULL };
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	int status, rc;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, to,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = posix_spawnp(&pid, "xenperf", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		fprintf(stderr, "xps_dontneed: xenperf: %s\n", strerror(rc));
		return -1;
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*flt += ru.ru_minflt + ru.ru_majflt;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The -x snapshots, @which is 0 (before) or 1 (after the release). */
static int snapshot(const char *prefix, int which, long *flt)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.st%d", prefix, which);
	if (which == 0 && copy_file(XPS_STATS, path))
		return -1;
	snprintf(path, sizeof(path), "%s.xp%d", prefix, which);
	if (xenperf_to(path, flt))
		return -1;
	snprintf(path, sizeof(path), "%s.st%d", prefix, which);
	if (which == 1 && copy_file(XPS_STATS, path))
		return -1;
	return 0;
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
	const char *prefix = NULL;
	long psz = sysconf(_SC_PAGESIZE);
	unsigned char sink = 0;
	unsigned char *p;
	size_t len;

	while ((opt = getopt(argc, argv, "m:n:srcx:")) != -1) {
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
		case 'x':
			prefix = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s %s\n", argv[0],
				"[-m MIB] [-n ROUNDS] [-s] [-r] [-c] [-x PREFIX]");
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
		long flt0 = minflt(), spawnflt = 0;
		double t0, t1;

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
		if (prefix && snapshot(prefix, 0, &spawnflt))
			return 2;
		t0 = now_ms();
		if (madvise(p, len, MADV_DONTNEED)) {
			fprintf(stderr, "xps_dontneed: madvise: %s\n",
				strerror(errno));
			return 2;
		}
		t1 = now_ms();
		if (prefix && snapshot(prefix, 1, &spawnflt))
			return 2;
		printf("pages=%lu ms=%.3f minflt=%ld spawnflt=%ld\n", pages,
		       t1 - t0, minflt() - flt0, spawnflt);
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
