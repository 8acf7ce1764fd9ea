// SPDX-License-Identifier: MIT
/*
 * pending_dirty - a read-only, clean PTE zapped while a TLB flush is
 * pending for its mm must not lose the D bit that a CPU still holding a
 * stale writable TLB entry sets in it.
 *
 * A Xen PV ptep_get_and_clear() that reads an entry and queues its clear
 * returns the value it read; until the queued clear lands, the live entry
 * stays present, and a CPU whose TLB still maps the page writable (a
 * write-protect whose flush is pending) can set D in it: that D is lost,
 * and with it the write of a file page.  QEMU's software CPU never sets D
 * that way, so the lab's debug kernel plays that CPU
 * (test/lab/linux-test-patch/VERSION/0002, debugfs xps_test_zap/): while
 * "pending" is 1, a TLB flush is pending for this process's mm, and every
 * entry zap_pte_range() finds still present after the clear returned is
 * counted in "queued"; a read-only, clean one gets D set and is counted in
 * "dirtied".
 *
 * Checks (one MADV_DONTNEED of each region while the flush is pending):
 *  pending-dirty-queued  control: 512 pages of private anonymous memory,
 *                        written (writable, dirty PTEs, which a batching
 *                        module queues): "queued" grew by at least 512, so
 *                        clears were queued and the test saw them
 *  pending-dirty-kept    512 pages of a memfd mapped shared and read-only,
 *                        read (read-only, clean PTEs): "dirtied" stayed 0,
 *                        no such clear was queued while the flush was
 *                        pending
 * Usage: pending_dirty (no arguments), as root, on the lab's debug
 * kernel; without debugfs xps_test_zap/ both checks FAIL (cannot run).
 * Exit status 0 if every check passed.
 */
#include "xps_check.h"

#define KNOB_DIR "/sys/kernel/debug/xps_test_zap/"
#define PAGES 512

/* Write @val to knob @name; 0, or -errno. */
static int knob_write(const char *name, const char *val)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), KNOB_DIR "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Knob @name's value, or -1 (errno set). */
static long long knob_read(const char *name)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), KNOB_DIR "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 0);
}

int main(void)
{
	struct xps_check queued, kept;
	size_t len = PAGES * xps_page_size();
	long long q0, q1, d0, d1;
	volatile unsigned char *ro;
	unsigned char *anon;
	unsigned long sum = 0;
	int fd, err;

	xps_begin(&queued, "pending-dirty-queued");
	xps_begin(&kept, "pending-dirty-kept");
	if (knob_write("queued", "0") || knob_write("dirtied", "0")) {
		xps_bad(&queued, "cannot run because %s cannot be written (%s)",
			KNOB_DIR, strerror(errno));
		xps_bad(&kept, "cannot run: no " KNOB_DIR);
		xps_end(&queued);
		xps_end(&kept);
		return xps_exit_status();
	}

	anon = xps_map(&queued, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1);
	xps_fill(anon, len, 7, 0);
	fd = xps_memfd(&kept, "pending_dirty", len);
	ro = xps_map(&kept, len, PROT_READ, MAP_SHARED, fd);
	for (size_t off = 0; off < len; off += xps_page_size())
		sum += ro[off];

	err = knob_write("pending", "1");
	if (err)
		XPS_DIE(&kept, "cannot mark a TLB flush pending: %s", strerror(-err));
	q0 = knob_read("queued");
	xps_madvise(&queued, anon, len, MADV_DONTNEED, "MADV_DONTNEED");
	q1 = knob_read("queued");
	d0 = knob_read("dirtied");
	xps_madvise(&kept, (void *)ro, len, MADV_DONTNEED, "MADV_DONTNEED");
	d1 = knob_read("dirtied");
	err = knob_write("pending", "0");
	if (err)
		xps_bad(&kept, "cannot end the pending TLB flush: %s", strerror(-err));

	if (q0 < 0 || q1 < 0)
		xps_bad(&queued, "cannot read " KNOB_DIR "queued");
	else if (q1 - q0 < PAGES)
		xps_bad(&queued, "%lld of %d dirty clears queued (%s)", q1 - q0,
			PAGES, "no batching module, or the test hook did not run");
	if (d0 < 0 || d1 < 0)
		xps_bad(&kept, "cannot read " KNOB_DIR "dirtied");
	else if (d1 != d0)
		xps_bad(&kept, "%lld of %d read-only clean clears queued (%s)",
			d1 - d0, PAGES,
			"a TLB flush pending: each lost the D a stale TLB entry set");
	printf("# queued %lld, dirtied %lld (sum %lu)\n", q1 - q0, d1 - d0, sum);
	xps_end(&queued);
	xps_end(&kept);
	munmap(anon, len);
	munmap((void *)ro, len);
	close(fd);
	return xps_exit_status();
}
