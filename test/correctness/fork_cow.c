// SPDX-License-Identifier: MIT
/*
 * fork_cow - fork(), copy-on-write, exit: breaking COW replaces the PTE
 * with ptep_clear_flush() (wp_page_copy()), and the child's exit tears
 * its page tables down.  Parent and children each see their own data.
 *
 * Checks (8 MiB of private anonymous memory):
 *  fork-cow-private    3 rounds: the child checks the parent's data, writes
 *                      half the pages and checks them; the parent meanwhile
 *                      writes a third of the pages; after the child exits
 *                      the parent sees exactly its own data
 *  fork-cow-many       4 children at once each overwrite every page with
 *                      their own data and check it, while the parent checks
 *                      its unchanged data; again after they exit
 *  fork-shared         MAP_SHARED|MAP_ANONYMOUS: what the child writes
 *                      before it exits is what the parent reads
 * Usage: fork_cow (no arguments).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <sys/wait.h>

#define MIB (1024 * 1024UL)
#define LEN (8 * MIB)

static size_t psz, npages;

/* Wait for @pid; 0 if it exited with status 0, else reports to @c. */
static int reap(struct xps_check *c, pid_t pid, const char *who)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		XPS_DIE(c, "waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		xps_bad(c, "%s found wrong data (exit status %d)", who, WEXITSTATUS(status));
	else
		xps_bad(c, "%s killed by signal %d", who, WTERMSIG(status));
	return -1;
}

/* In a child: 0 if pages with index % @mod == @rem hold @seed. */
static int pages_hold(const unsigned char *p, size_t mod, size_t rem, uint64_t seed)
{
	for (size_t i = rem; i < npages; i += mod)
		if (xps_cmp(p + i * psz, psz, seed, i * xps_wpp()) >= 0)
			return -1;
	return 0;
}

static void cow_private(void)
{
	struct xps_check c;
	unsigned char *p;

	xps_begin(&c, "fork-cow-private");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	for (uint64_t r = 0; r < 3; r++) {
		uint64_t a = 700 + 3 * r, b = a + 1, own = a + 2;
		pid_t pid;

		xps_fill(p, LEN, a, 0);
		pid = fork();
		if (pid < 0)
			XPS_DIE(&c, "fork: %s", strerror(errno));
		if (pid == 0) {
			if (pages_hold(p, 1, 0, a))
				_exit(1);
			for (size_t i = 0; i < npages; i += 2)
				xps_fill(p + i * psz, psz, b, i * xps_wpp());
			_exit(pages_hold(p, 2, 0, b) || pages_hold(p, 2, 1, a) ? 2 : 0);
		}
		for (size_t i = 0; i < npages; i += 3)
			xps_fill(p + i * psz, psz, own, i * xps_wpp());
		reap(&c, pid, "the child");
		for (size_t i = 0; i < npages; i++) {
			uint64_t want = i % 3 == 0 ? own : a;

			if (xps_cmp(p + i * psz, psz, want, i * xps_wpp()) >= 0) {
				xps_bad(&c, "round %llu: parent's page %zu changed%s",
					(unsigned long long)r, i,
					xps_cmp(p + i * psz, psz, b, i * xps_wpp()) < 0 ?
					" (to the child's data)" : "");
				break;
			}
		}
	}
	munmap(p, LEN);
	xps_end(&c);
}

static void cow_many(void)
{
	struct xps_check c;
	unsigned char *p;
	pid_t pid[4];

	xps_begin(&c, "fork-cow-many");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	xps_fill(p, LEN, 720, 0);
	for (int k = 0; k < 4; k++) {
		pid[k] = fork();
		if (pid[k] < 0)
			XPS_DIE(&c, "fork: %s", strerror(errno));
		if (pid[k] == 0) {
			xps_pin(k % 2);
			if (pages_hold(p, 1, 0, 720))
				_exit(1);
			xps_fill(p, LEN, 730 + (uint64_t)k, 0);
			_exit(pages_hold(p, 1, 0, 730 + (uint64_t)k) ? 2 : 0);
		}
	}
	xps_expect(&c, "parent while the children write", p, LEN, 720, 0);
	for (int k = 0; k < 4; k++)
		reap(&c, pid[k], "a child");
	xps_expect(&c, "parent after the children exited", p, LEN, 720, 0);
	munmap(p, LEN);
	xps_end(&c);
}

static void cow_shared(void)
{
	struct xps_check c;
	unsigned char *p;
	pid_t pid;

	xps_begin(&c, "fork-shared");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	xps_fill(p, LEN, 740, 0);
	pid = fork();
	if (pid < 0)
		XPS_DIE(&c, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (pages_hold(p, 1, 0, 740))
			_exit(1);
		xps_fill(p, LEN, 741, 0);
		_exit(0);
	}
	reap(&c, pid, "the child");
	xps_expect(&c, "parent reads the child's writes", p, LEN, 741, 0);
	munmap(p, LEN);
	xps_end(&c);
}

int main(void)
{
	psz = xps_page_size();
	npages = LEN / psz;
	cow_private();
	cow_many();
	cow_shared();
	return xps_exit_status();
}
