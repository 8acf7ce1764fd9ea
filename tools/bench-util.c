// SPDX-License-Identifier: MIT
/*
 * bench-util.c - helpers shared by the xen-ptswap benchmarks (see
 * bench-util.h for what each one does and why).
 */
#define _GNU_SOURCE
#include "bench-util.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

extern char **environ;

const struct option bench_hook_longopts[] = {
	{ "pre", required_argument, NULL, 'P' },
	{ "post", required_argument, NULL, 'Q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void bench_usage(const char *prog, const struct bench_cli *cli, FILE *f)
{
	fprintf(f, "usage: %s %s", prog, cli->usage);
}

int bench_getopt(int argc, char **argv, struct bench_cli *cli)
{
	int c;

	for (;;) {
		c = getopt_long(argc, argv, cli->optstring, cli->longopts, NULL);
		switch (c) {
		case 's':
			if (parse_size(optarg, &cli->size) || cli->size == 0) {
				fprintf(stderr, "%s: bad size '%s'\n", argv[0], optarg);
				exit(2);
			}
			break;
		case 'r':
			cli->runs = strtol(optarg, NULL, 10);
			if (cli->runs < 1 || cli->runs > cli->max_runs) {
				fprintf(stderr, "%s: bad run count '%s'\n", argv[0], optarg);
				exit(2);
			}
			break;
		case 'm':
			cli->machine = 1;
			break;
		case 'P':
			cli->pre = optarg;
			break;
		case 'Q':
			cli->post = optarg;
			break;
		case 'h':
			bench_usage(argv[0], cli, stdout);
			exit(0);
		case '?':
		case ':':
			bench_usage(argv[0], cli, stderr);
			exit(2);
		case -1:
			if (optind != argc) {
				bench_usage(argv[0], cli, stderr);
				exit(2);
			}
			return -1;
		default:
			return c;
		}
	}
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mult = 1ULL << 10;
		end++;
		break;
	case 'm': case 'M':
		mult = 1ULL << 20;
		end++;
		break;
	case 'g': case 'G':
		mult = 1ULL << 30;
		end++;
		break;
	default:
		return -1;
	}
	/* Accept an optional "iB" or "B" after the suffix. */
	if (*end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0')
		return -1;
	if (v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

void now(struct timespec *ts)
{
	if (clock_gettime(CLOCK_MONOTONIC, ts)) {
		perror("clock_gettime(CLOCK_MONOTONIC)");
		exit(1);
	}
}

int thp_disable_process(void)
{
#ifdef PR_SET_THP_DISABLE
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0)
		return 1;
#endif
	return 0;
}

int thp_disable_range(void *addr, size_t len)
{
#ifdef MADV_NOHUGEPAGE
	return madvise(addr, len, MADV_NOHUGEPAGE);
#else
	(void)addr;
	(void)len;
	errno = EINVAL;	/* what madvise() says of advice it does not know */
	return -1;
#endif
}

long long anon_huge_bytes(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

int run_hook(const char *cmd, int run, const char *phase)
{
	char runbuf[32];
	char *const argv[] = { "sh", "-c", (char *)cmd, NULL };
	pid_t pid;
	int status, err;

	fflush(NULL);
	snprintf(runbuf, sizeof(runbuf), "%d", run);
	if (setenv("BENCH_RUN", runbuf, 1) || setenv("BENCH_PHASE", phase, 1))
		return -1;
	err = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
	if (err) {
		fprintf(stderr, "cannot run hook '%s': %s\n", cmd, strerror(err));
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(const double *v, size_t n)
{
	double *c = malloc(n * sizeof(*c));
	double m;

	if (!c) {
		perror("malloc");
		exit(1);
	}
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = (n % 2) ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

const char *human_size(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ULL << 30) && bytes % (1ULL << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(bytes >> 30));
	else if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
	else if (bytes >= (1ULL << 10) && bytes % (1ULL << 10) == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	return buf;
}
