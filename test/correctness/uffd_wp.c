// SPDX-License-Identifier: MIT
/*
 * uffd_wp - userfaultfd write-protect markers on shmem: zapping a
 * write-protected shmem PTE clears it and, in the same lazy MMU section,
 * sets a uffd-wp marker in its place (zap_pte_range() ->
 * pte_install_uffd_wp_if_needed()).  The clear is deferrable (the entry is
 * read-only), so the clear and the set must land in that order: if the
 * clear landed last, the marker would be lost and a later write would
 * not be reported.
 *
 * Method: a memfd written, registered for WP, write-protected, released
 * with MADV_DONTNEED (markers installed), read back (data intact), then
 * every page written by a thread while this one answers the uffd: each
 * write must arrive as one WP fault for its page, which is then
 * unprotected; afterwards pread() returns the new data.  3 rounds.
 *
 * Check:
 *  uffd-wp-marker   every page's marker survived the zap: one WP fault per
 *                   written page (counted until the writer has finished and
 *                   no event is pending), data intact before and after
 * Usage: uffd_wp (no arguments).  Exit status 0 if the check passed.
 */
#include "xps_check.h"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#define PAGES 64

static size_t psz, len;
static unsigned char *map;
static uint64_t new_seed;
static volatile int writer_done;

static void *writer_main(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < PAGES; i++)
		xps_fill(map + i * psz, psz, new_seed, i * xps_wpp());
	writer_done = 1;
	return NULL;
}

static int protect(int uffd, void *addr, size_t n, int wp)
{
	struct uffdio_writeprotect w = {
		.range = { .start = (uintptr_t)addr, .len = n },
		.mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &w);
}

int main(void)
{
	struct xps_check c;
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM };
	struct uffdio_register reg;
	unsigned char *buf, seen[PAGES];
	int fd, uffd;

	psz = xps_page_size();
	len = PAGES * psz;
	xps_begin(&c, "uffd-wp-marker");
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		XPS_DIE(&c, "cannot run because userfaultfd() failed: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		XPS_DIE(&c, "cannot run because UFFDIO_API with WP on shmem failed: %s",
			strerror(errno));
	fd = xps_memfd(&c, "xps-uffd-wp", len);
	map = xps_map(&c, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	buf = malloc(len);
	if (!buf)
		XPS_DIE(&c, "malloc: out of memory");
	reg.range.start = (uintptr_t)map;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		XPS_DIE(&c, "cannot run because UFFDIO_REGISTER(WP) failed: %s", strerror(errno));

	for (uint64_t r = 0; r < 3 && !c.bad; r++) {
		uint64_t old_seed = 1300 + 2 * r;
		size_t faults = 0;
		pthread_t t;

		xps_fill(map, len, old_seed, 0);
		if (protect(uffd, map, len, 1))
			XPS_DIE(&c, "UFFDIO_WRITEPROTECT: %s", strerror(errno));
		xps_madvise(&c, map, len, MADV_DONTNEED, "MADV_DONTNEED");
		xps_expect(&c, "read after the zap", map, len, old_seed, 0);

		new_seed = old_seed + 1;
		memset(seen, 0, sizeof(seen));
		writer_done = 0;
		if (pthread_create(&t, NULL, writer_main, NULL))
			XPS_DIE(&c, "pthread_create failed");
		while (faults < PAGES) {
			struct pollfd pfd = { .fd = uffd, .events = POLLIN };
			struct uffd_msg msg;
			size_t i;
			int done = writer_done, n = poll(&pfd, 1, 100);

			if (n == 0 && done) {
				/* The writer finished without faulting on every page. */
				xps_bad(&c,
					"round %llu: %zu write-protect faults for %d written pages: a marker was lost and a write went through",
					(unsigned long long)r, faults, PAGES);
				break;
			}
			if (n == 0)
				continue;
			if (n < 0 || read(uffd, &msg, sizeof(msg)) != sizeof(msg))
				XPS_DIE(&c, "poll/read of the userfaultfd: %s", strerror(errno));
			if (msg.event != UFFD_EVENT_PAGEFAULT ||
			    !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
				xps_bad(&c,
					"round %llu: unexpected userfaultfd event %u flags %#llx",
					(unsigned long long)r, msg.event,
					(unsigned long long)msg.arg.pagefault.flags);
				break;
			}
			i = (size_t)((msg.arg.pagefault.address - (uintptr_t)map) / psz);
			if (i >= PAGES || seen[i]++)
				xps_bad(&c, "round %llu: a second or stray fault at page %zu",
					(unsigned long long)r, i);
			faults++;
			if (protect(uffd, map + i * psz, psz, 0))
				XPS_DIE(&c, "UFFDIO_WRITEPROTECT(0): %s", strerror(errno));
		}
		if (c.bad) {
			/* Let a writer stuck on a fault go, then stop. */
			protect(uffd, map, len, 0);
			pthread_join(t, NULL);
			break;
		}
		pthread_join(t, NULL);
		xps_expect(&c, "mapping after the writes", map, len, new_seed, 0);
		xps_pread(&c, fd, buf, len, 0);
		xps_expect(&c, "pread after the writes", buf, len, new_seed, 0);
	}
	free(buf);
	munmap(map, len);
	close(fd);
	close(uffd);
	xps_end(&c);
	return xps_exit_status();
}
