// SPDX-License-Identifier: MIT
/*
 * mprotect - RW -> RO -> RW on written memory: change_pte_range() rewrites
 * every PTE (ptep_modify_prot_start/commit; on Xen PV a preserving
 * mmu_update, not ptep_get_and_clear, but it must agree with the entries
 * the module left).  Data survives; protection is what was asked.
 *
 * Checks (8 MiB, 3 rounds each, unless a size is given):
 *  mprotect-anon     private anonymous: data kept across RW->RO->RW, a
 *                    write while RO is refused (SIGSEGV in a child), writes
 *                    after RW again land
 *  mprotect-memfd    the same on a shared memfd mapping, pages first only
 *                    read-faulted; pread() and, after the mapping and the
 *                    cache are dropped, pread() again return the data
 *  mprotect-none-shared  shared anonymous (shmem), 1 MiB: written, then
 *                    PROT_NONE (present -> PROT_NONE entries), access
 *                    faults, RW again keeps the data; then PROT_NONE once
 *                    more and unmapped while PROT_NONE, so the pages are
 *                    freed from entries page_table_check does not count
 *                    (on Xen PV its counts follow ptep_modify_prot_commit()
 *                    only with test/linux-patch/6.1/0007; without it a debug
 *                    kernel BUG()s in page_table_check_free())
 *  mprotect-none-memfd   the same on a memfd, whose pages outlive the
 *                    mapping: pread() returns the data, then close() frees
 *                    them
 * Usage: mprotect (no arguments).  Exit status 0 if every check passed.
 */
#include "xps_check.h"

#include <signal.h>
#include <sys/wait.h>

#define MIB (1024 * 1024UL)
#define LEN (8 * MIB)

/* 1 if writing one byte at @q kills a child with SIGSEGV. */
static int write_faults(volatile unsigned char *q)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		*q = 1;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

/*
 * Present -> PROT_NONE -> RW -> PROT_NONE, then unmap while PROT_NONE:
 * @p is @len bytes mapped MAP_SHARED read-write; unmapped on return.
 */
static void none_rounds(struct xps_check *c, unsigned char *p, size_t len, uint64_t seed)
{
	xps_fill(p, len, seed, 0);
	if (mprotect(p, len, PROT_NONE))
		XPS_DIE(c, "mprotect(PROT_NONE): %s", strerror(errno));
	if (write_faults(p + len / 2) != 1)
		xps_bad(c, "a write to the PROT_NONE range did not fault");
	if (mprotect(p, len, PROT_READ | PROT_WRITE))
		XPS_DIE(c, "mprotect(PROT_READ|PROT_WRITE): %s", strerror(errno));
	xps_expect(c, "read-write after PROT_NONE", p, len, seed, 0);
	xps_fill(p, len, seed + 1, 0);
	if (mprotect(p, len, PROT_NONE))
		XPS_DIE(c, "mprotect(PROT_NONE): %s", strerror(errno));
	if (munmap(p, len))
		XPS_DIE(c, "munmap: %s", strerror(errno));
}

static void rounds(struct xps_check *c, unsigned char *p, int fd, uint64_t seed0)
{
	size_t psz = xps_page_size();
	unsigned char *buf = NULL;

	if (fd >= 0) {
		buf = malloc(LEN);
		if (!buf)
			XPS_DIE(c, "malloc: out of memory");
	}
	for (uint64_t r = 0; r < 3; r++) {
		uint64_t seed = seed0 + r;

		if (fd >= 0) {
			volatile unsigned char sink = 0;

			for (size_t off = 0; off < LEN; off += psz)
				sink += p[off];
			(void)sink;
		}
		xps_fill(p, LEN, seed, 0);
		if (mprotect(p, LEN, PROT_READ))
			XPS_DIE(c, "mprotect(PROT_READ): %s", strerror(errno));
		xps_expect(c, "read-only", p, LEN, seed, 0);
		if (write_faults(p + LEN / 2) != 1)
			xps_bad(c, "round %llu: a write to the read-only range did not fault",
				(unsigned long long)r);
		if (mprotect(p, LEN, PROT_READ | PROT_WRITE))
			XPS_DIE(c, "mprotect(PROT_READ|PROT_WRITE): %s", strerror(errno));
		xps_expect(c, "read-write again", p, LEN, seed, 0);
		/* Half the pages get new data after the round trip. */
		for (size_t i = 0; i < LEN / psz; i += 2)
			xps_fill(p + i * psz, psz, seed + 100, i * xps_wpp());
		for (size_t i = 0; i < LEN / psz; i++) {
			uint64_t want = i % 2 ? seed : seed + 100;

			if (xps_cmp(p + i * psz, psz, want, i * xps_wpp()) >= 0) {
				xps_bad(c, "round %llu: page %zu wrong after the rewrite",
					(unsigned long long)r, i);
				break;
			}
		}
		if (fd >= 0) {
			xps_pread(c, fd, buf, LEN, 0);
			for (size_t i = 0; i < LEN / psz; i++) {
				uint64_t want = i % 2 ? seed : seed + 100;

				if (xps_cmp(buf + i * psz, psz, want, i * xps_wpp()) >= 0) {
					xps_bad(c, "round %llu: pread page %zu wrong",
						(unsigned long long)r, i);
					break;
				}
			}
		}
	}
	free(buf);
}

int main(void)
{
	struct xps_check c;
	unsigned char *p, *buf;
	size_t psz = xps_page_size();
	int fd, err;

	xps_begin(&c, "mprotect-anon");
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	rounds(&c, p, -1, 800);
	munmap(p, LEN);
	xps_end(&c);

	xps_begin(&c, "mprotect-memfd");
	fd = xps_memfd(&c, "xps-mprotect", LEN);
	p = xps_map(&c, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	rounds(&c, p, fd, 810);
	munmap(p, LEN);
	err = xps_drop_caches();
	if (err)
		XPS_DIE(&c, "drop_caches: %s", strerror(-err));
	buf = malloc(LEN);
	if (!buf)
		XPS_DIE(&c, "malloc: out of memory");
	xps_pread(&c, fd, buf, LEN, 0);
	for (size_t i = 0; i < LEN / psz; i++) {
		uint64_t want = i % 2 ? 812 : 912;

		if (xps_cmp(buf + i * psz, psz, want, i * xps_wpp()) >= 0) {
			xps_bad(&c, "pread after drop_caches: page %zu wrong%s", i,
				xps_is_zero(buf + i * psz, psz) ? " (reads as zero)" : "");
			break;
		}
	}
	free(buf);
	close(fd);
	xps_end(&c);

	xps_begin(&c, "mprotect-none-shared");
	p = xps_map(&c, MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	none_rounds(&c, p, MIB, 820);
	xps_end(&c);

	xps_begin(&c, "mprotect-none-memfd");
	fd = xps_memfd(&c, "xps-mprotect-none", MIB);
	p = xps_map(&c, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	none_rounds(&c, p, MIB, 830);
	buf = malloc(MIB);
	if (!buf)
		XPS_DIE(&c, "malloc: out of memory");
	xps_pread(&c, fd, buf, MIB, 0);
	if (xps_cmp(buf, MIB, 831, 0) >= 0)
		xps_bad(&c, "pread after the PROT_NONE unmap: data wrong");
	free(buf);
	close(fd);
	xps_end(&c);
	return xps_exit_status();
}
