// SPDX-License-Identifier: MIT
/*
 * mmu_fail - page table updates that Xen refuses.  Step "update": a zap
 * whose lazy MMU multicall batch gets a refused call appended, and a
 * copy-on-write fault whose immediate set_pte() is refused; the data each
 * keeps and releases is still right, and test/suites/fail-inject.sh checks
 * the counters (the kernel counts both refusals, the module queues no
 * clear after them).  Step "clear": a MADV_FREE whose batch Xen refuses at
 * its first request, a clear the module queued; the kernel must panic
 * there (xen_queue_pte_clear(), the series' "panic when Xen refuses a
 * multicall" patch), so this step returns only on a kernel that went on.
 *
 * Needs the lab's debug kernel and its test-only fault attributes
 * (test/lab/linux-test-patch/VERSION/0003-*.patch): fail_xen_mmu_update
 * makes Xen refuse one more mmu_update, issued after the real ones, in a
 * batch or an immediate update it picks; fail_xen_mmu_clear makes Xen
 * refuse the first request of a batch whose first mmu_update starts with
 * a PTE clear, which leaves the rest of that call undone.  The suite sets
 * them to pick only tasks marked in /proc/<pid>/make-it-fail (task-filter
 * Y), probability 100, times 0; this program sets times to 1 and marks
 * itself around one operation at a time.
 *
 * Checks, step "update":
 *  mmu-fail-batch 8 MiB of private anonymous memory filled, marked,
 *                 MADV_DONTNEED of the middle half with fail_xen_mmu_update
 *                 armed: times went from 1 to 0 (a batch of this madvise()
 *                 got the refused call); no released page is present in
 *                 /proc/self/pagemap; released pages read as zero, the
 *                 others keep their data
 *  mmu-fail-after the same unmarked, 4 rounds: the same contents
 *  mmu-fail-cow   the memory filled again, a child forked, one page
 *                 written while marked (a copy-on-write fault, whose
 *                 set_pte()s are immediate): times went from 1 to 0; the
 *                 parent reads its new data, the child the old
 * Step "clear" (prints no PASS: the lab reports the panic):
 *  mmu-fail-clear 8 MiB filled (dirty entries: clears the module queues),
 *                 marked, MADV_FREE of all of it with fail_xen_mmu_clear
 *                 armed (MADV_FREE clears each entry and re-installs it
 *                 clean in the same batch).  Returning is the failure;
 *                 what it says: whether the armed refusal was taken, how
 *                 many pages are still mapped (pagemap; MADV_FREE keeps
 *                 them mapped until reclaim) and whether they kept their
 *                 data.
 * Usage: mmu_fail update [UPDATE_DIR] | mmu_fail clear [CLEAR_DIR]
 * (defaults /sys/kernel/debug/fail_xen_mmu_update and
 * .../fail_xen_mmu_clear).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <signal.h>
#include <sys/wait.h>

#define MIB (1024 * 1024UL)
#define LEN (8 * MIB)
#define ROUNDS 4

static const char *update_dir = "/sys/kernel/debug/fail_xen_mmu_update";
static const char *clear_dir = "/sys/kernel/debug/fail_xen_mmu_clear";

/* Write @val to the "times" of the attribute in @attr_dir; 0 on success. */
static int set_times(const char *attr_dir, long val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/times", attr_dir);
	return xps_write_long(path, val);
}

/* The "times" of the attribute in @attr_dir, or -1000 if unreadable. */
static long times_left(const char *attr_dir)
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

/* Arm one failure of the attribute in @attr_dir and mark this task. */
static void arm(struct xps_check *c, const char *attr_dir)
{
	if (set_times(attr_dir, 1))
		XPS_DIE(c, "cannot write 1 to %s/times: %s", attr_dir, strerror(errno));
	make_it_fail(c, 1);
}

/* Unmark this task and check that the one failure was taken. */
static void disarm(struct xps_check *c, const char *attr_dir, const char *what)
{
	long left;

	make_it_fail(c, 0);
	left = times_left(attr_dir);
	if (left != 0)
		xps_bad(c, "%s: %s/times is %ld after it (want 0: the armed failure was not taken)",
			what, attr_dir, left);
	set_times(attr_dir, 0);
}

/* How many pages of [@p, @p+@len) /proc/self/pagemap shows present. */
static size_t present_pages(struct xps_check *c, void *p, size_t len)
{
	size_t psz = xps_page_size(), n = len / psz, present = 0;
	uint64_t e;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		XPS_DIE(c, "open /proc/self/pagemap: %s", strerror(errno));
	for (size_t i = 0; i < n; i++) {
		off_t off = ((uintptr_t)p / psz + i) * sizeof(e);

		if (pread(fd, &e, sizeof(e), off) != sizeof(e))
			XPS_DIE(c, "read /proc/self/pagemap: %s", strerror(errno));
		present += e >> 63;
	}
	close(fd);
	return present;
}

/* Fill, release the middle half, check; round @r. */
static void zap_round(struct xps_check *c, unsigned char *p, uint64_t r, int marked)
{
	size_t q = LEN / 4, qp = q / xps_page_size(), left;

	xps_fill(p, LEN, 40 + r, 0);
	if (marked)
		arm(c, update_dir);
	xps_madvise(c, p + q, 2 * q, MADV_DONTNEED, "MADV_DONTNEED");
	if (marked)
		disarm(c, update_dir, "the marked madvise()");
	left = present_pages(c, p + q, 2 * q);
	if (left)
		xps_bad(c, "round %llu: %zu of %zu released pages still mapped (pagemap)",
			(unsigned long long)r, left, 2 * qp);
	xps_expect(c, "kept first quarter", p, q, 40 + r, 0);
	xps_expect(c, "kept last quarter", p + 3 * q, q, 40 + r, 3 * qp);
	if (!xps_is_zero(p + q, 2 * q))
		xps_bad(c, "round %llu: released pages do not read as zero",
			(unsigned long long)r);
}

/* A child keeps the memory shared; a marked write copies one page. */
static void cow(struct xps_check *c, unsigned char *p)
{
	size_t psz = xps_page_size(), wpp = xps_wpp();
	int go[2], status;
	pid_t pid;

	xps_fill(p, LEN, 60, 0);
	if (pipe(go))
		XPS_DIE(c, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		XPS_DIE(c, "fork: %s", strerror(errno));
	if (pid == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		/* The parent has written page 1: ours still holds seed 60. */
		_exit(xps_cmp(p, LEN, 60, 0) < 0 ? 0 : 1);
	}
	close(go[0]);
	arm(c, update_dir);
	xps_fill(p + psz, psz, 61, wpp);
	disarm(c, update_dir, "the marked copy-on-write");
	if (write(go[1], "g", 1) != 1)
		xps_bad(c, "cannot wake the child: %s", strerror(errno));
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid)
		xps_bad(c, "waitpid: %s", strerror(errno));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		xps_bad(c, "the child's copy changed or it failed (status %#x)", status);
	xps_expect(c, "parent's written page", p + psz, psz, 61, 1);
	xps_expect(c, "parent's first page", p, psz, 60, 0);
	xps_expect(c, "parent's other pages", p + 2 * psz, LEN - 2 * psz, 60, 2);
}

/* MADV_FREE with a refused clear: the kernel should not come back. */
static void clear_step(struct xps_check *c, unsigned char *p)
{
	size_t np = LEN / xps_page_size(), left;
	long times;

	xps_fill(p, LEN, 70, 0);
	printf("# mmu-fail-clear: MADV_FREE of %zu dirty pages, %s armed: expect a panic\n",
	       np, clear_dir);
	fflush(stdout);
	arm(c, clear_dir);
	xps_madvise(c, p, LEN, MADV_FREE, "MADV_FREE");
	make_it_fail(c, 0);
	times = times_left(clear_dir);
	set_times(clear_dir, 0);
	left = present_pages(c, p, LEN);
	xps_bad(c, "no panic after a refused clear (%s/times %ld%s); %zu of %zu pages mapped",
		clear_dir, times, times ? ": the refusal was not taken" : "", left, np);
	xps_expect(c, "pages after MADV_FREE", p, LEN, 70, 0);
}

int main(int argc, char **argv)
{
	struct xps_check c;
	unsigned char *p;
	int clear;

	if (argc < 2 || (strcmp(argv[1], "update") && strcmp(argv[1], "clear"))) {
		fprintf(stderr, "usage: mmu_fail update [DIR] | mmu_fail clear [DIR]\n");
		return 2;
	}
	clear = !strcmp(argv[1], "clear");
	if (argc > 2) {
		if (clear)
			clear_dir = argv[2];
		else
			update_dir = argv[2];
	}
	signal(SIGPIPE, SIG_IGN);
	xps_begin(&c, clear ? "mmu-fail-clear" : "mmu-fail-batch");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (clear) {
		clear_step(&c, p);
		xps_end(&c);
		munmap(p, LEN);
		return xps_exit_status();
	}
	zap_round(&c, p, 0, 1);
	xps_end(&c);

	xps_begin(&c, "mmu-fail-after");
	for (uint64_t r = 1; r <= ROUNDS; r++)
		zap_round(&c, p, r, 0);
	xps_end(&c);

	xps_begin(&c, "mmu-fail-cow");
	cow(&c, p);
	xps_end(&c);
	munmap(p, LEN);
	return xps_exit_status();
}
