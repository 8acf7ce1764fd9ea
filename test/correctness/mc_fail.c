// SPDX-License-Identifier: MIT
/*
 * mc_fail - a zap whose lazy MMU multicall batch fails: the data the
 * zap keeps and releases is still right, and the module queues no clear
 * afterwards (test/suites/fail-inject.sh checks its counters).
 *
 * Needs the lab's debug kernel: its test-only fault attribute
 * fail_xen_multicall (test/lab/linux-test-patch/6.1/0003-*.patch) makes
 * xen_mc_flush() append one mmu_update that Xen refuses to a batch it
 * picks.  The suite sets it to pick one batch (times 1, probability 100)
 * of a task marked in /proc/<pid>/make-it-fail (task-filter Y); this
 * program marks itself only around one madvise().
 *
 * Checks (8 MiB of private anonymous memory, the middle half released):
 *  mc-fail-zap    filled (dirty entries: clears the module queues), the
 *                 task marked, MADV_DONTNEED, unmarked: the attribute's
 *                 times went from 1 to 0 (a batch of this madvise() was
 *                 the one failed); released pages read as zero, the
 *                 others keep their data
 *  mc-fail-after  the same, unmarked, 4 rounds: the same contents
 * Usage: mc_fail [ATTR_DIR] (default /sys/kernel/debug/fail_xen_multicall).
 * Exit status 0 if every check passed.
 */
#include "xps_check.h"

#define MIB (1024 * 1024UL)
#define LEN (8 * MIB)
#define ROUNDS 4

static const char *attr_dir = "/sys/kernel/debug/fail_xen_multicall";

/* The attribute's "times" (failures left), or -1000 if unreadable. */
static long times_left(void)
{
	char path[256], buf[32];
	long v = -1000;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/times", attr_dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return v;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		v = strtol(buf, NULL, 10);
	}
	close(fd);
	return v;
}

/* Mark (1) or unmark (0) this task for the attribute's task filter. */
static void make_it_fail(struct xps_check *c, int on)
{
	int fd = open("/proc/self/make-it-fail", O_WRONLY);

	if (fd < 0)
		XPS_DIE(c, "open /proc/self/make-it-fail: %s (no CONFIG_FAULT_INJECTION?)",
			strerror(errno));
	if (write(fd, on ? "1" : "0", 1) != 1)
		XPS_DIE(c, "write %d to /proc/self/make-it-fail: %s", on, strerror(errno));
	close(fd);
}

/* Fill, release the middle half, check; round @r. */
static void zap_round(struct xps_check *c, unsigned char *p, uint64_t r, int marked)
{
	size_t q = LEN / 4, qp = q / xps_page_size();
	long before = 0, after = 0;

	xps_fill(p, LEN, 40 + r, 0);
	if (marked) {
		before = times_left();
		make_it_fail(c, 1);
	}
	xps_madvise(c, p + q, 2 * q, MADV_DONTNEED, "MADV_DONTNEED");
	if (marked) {
		make_it_fail(c, 0);
		after = times_left();
		if (before != 1 || after != 0)
			xps_bad(c, "%s/times: %ld before the marked madvise, %ld after (want 1, 0)",
				attr_dir, before, after);
	}
	xps_expect(c, "kept first quarter", p, q, 40 + r, 0);
	xps_expect(c, "kept last quarter", p + 3 * q, q, 40 + r, 3 * qp);
	if (!xps_is_zero(p + q, 2 * q))
		xps_bad(c, "round %llu: released pages do not read as zero",
			(unsigned long long)r);
}

int main(int argc, char **argv)
{
	struct xps_check c;
	unsigned char *p;

	if (argc > 1)
		attr_dir = argv[1];
	xps_begin(&c, "mc-fail-zap");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	zap_round(&c, p, 0, 1);
	xps_end(&c);

	xps_begin(&c, "mc-fail-after");
	for (uint64_t r = 1; r <= ROUNDS; r++)
		zap_round(&c, p, r, 0);
	munmap(p, LEN);
	xps_end(&c);
	return xps_exit_status();
}
