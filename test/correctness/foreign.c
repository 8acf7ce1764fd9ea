// SPDX-License-Identifier: MIT
/*
 * foreign - foreign mappings made through privcmd (xenforeignmemory_map),
 * then unmapped: zap_pte_range() on a VM_PFNMAP mapping of special PTEs,
 * the migration sender's hot path.  The lab has no other domain, so Dom0
 * maps its own frames: those of a locked buffer of its own.
 *
 * Which frames: /proc/self/pagemap gives the buffer's PFNs, but a PV
 * domain's foreign mappings take machine frames (MFNs), and user space
 * cannot translate.  So the PFNs are tried first as they are (domid 0 and
 * DOMID_SELF, each outcome printed as a "# foreign:" note), then the
 * machine frames maximum_ram_page..256 are mapped read-only in chunks,
 * from the top down, and searched for the buffer's per-page signatures
 * until every page is found.  Top down because Xen gives Dom0 its memory
 * from the top of the heap and keeps the low frames: a debug Xen logs two
 * lines for every frame of its own that Dom0 asks to map, which at the
 * serial console's pace took the bottom-up search past five minutes.
 * Xen refuses domid 0 from Dom0 itself ("cannot specify itself as foreign
 * domain", which a debug Xen logs for every frame): the search tries
 * DOMID_SELF first and domid 0 only if that found nothing, and says which
 * it used.  Found frames are checked by content before use.
 *
 * Checks:
 *  foreign-find-frames   every page of the 16-page buffer was found among
 *                        the machine frames (else FAIL with the errnos)
 *  foreign-map-read      20 rounds: the frames mapped read-write show the
 *                        buffer's exact contents, one call for all and one
 *                        call per page, unmapped in reverse order
 *  foreign-map-write     writes through the foreign mapping appear in the
 *                        buffer; after the unmap the buffer keeps them and
 *                        takes new writes of its own
 * Usage: foreign (no arguments; root in a Xen PV Dom0).  Exit status 0 if
 * every check passed.
 */
#include "xps_check.h"

#include <time.h>
#include <xenctrl.h>
#include <xenforeignmemory.h>

#define NB 16
#define SCAN_CHUNK 1024
#define MAGIC 0x58505346524e4731ULL	/* "XPSFRNG1" */

static size_t psz;
static unsigned char *buf;
static uint64_t nonce;

/* Word 0 MAGIC, word 1 nonce, word 2 page index, then pattern @seed. */
static void sign(uint64_t seed)
{
	for (size_t i = 0; i < NB; i++) {
		uint64_t *w = (uint64_t *)(buf + i * psz);

		xps_fill(buf + i * psz, psz, seed, i * xps_wpp());
		w[0] = MAGIC;
		w[1] = nonce;
		w[2] = i;
	}
}

/* Index of the buffer page whose signature page @pg carries, or -1. */
static long signature(const volatile uint64_t *pg)
{
	if (pg[0] != MAGIC || pg[1] != nonce || pg[2] >= NB)
		return -1;
	return (long)pg[2];
}

static int pagemap_pfns(struct xps_check *c, xen_pfn_t *pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		XPS_DIE(c, "open /proc/self/pagemap: %s", strerror(errno));
	for (size_t i = 0; i < NB; i++) {
		uint64_t e;
		off_t off = (off_t)(((uintptr_t)buf + i * psz) / psz * 8);

		if (pread(fd, &e, 8, off) != 8)
			XPS_DIE(c, "read /proc/self/pagemap: %s", strerror(errno));
		if (!(e >> 63) || !(e & ((1ULL << 55) - 1))) {
			close(fd);
			return -1;
		}
		pfn[i] = e & ((1ULL << 55) - 1);
	}
	close(fd);
	return 0;
}

/* Map @frames of @dom read-only and count pages that carry the signature. */
static int try_direct(xenforeignmemory_handle *fm, uint32_t dom, xen_pfn_t *frames,
		      const char *what)
{
	int err[NB], good = 0;
	unsigned char *m = xenforeignmemory_map(fm, dom, PROT_READ, NB, frames, err);

	if (!m) {
		printf("# foreign: %s of domid %#x: map failed: %s\n", what, dom, strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < NB; i++)
		if (!err[i] && signature((uint64_t *)(m + i * psz)) == (long)i)
			good++;
	fprintf(stdout,
		"# foreign: %s of domid %#x: mapped, first frame error %d, %d of %d pages are the buffer's\n",
		what, dom, err[0], good, NB);
	xenforeignmemory_unmap(fm, m, NB);
	return good;
}

/* Search machine frames of @dom for the buffer's pages; count found. */
static int scan(xenforeignmemory_handle *fm, uint32_t dom, unsigned long max_mfn,
		xen_pfn_t *mfn, int *map_errno)
{
	static xen_pfn_t cand[SCAN_CHUNK];
	static int err[SCAN_CHUNK];
	int found = 0, mapped_any = 0;

	*map_errno = 0;
	for (unsigned long top = max_mfn + 1; top > 256 && found < NB;) {
		size_t n = top - 256 < SCAN_CHUNK ? top - 256 : SCAN_CHUNK;
		unsigned long base = top - n;
		unsigned char *m;

		top = base;

		for (size_t i = 0; i < n; i++)
			cand[i] = base + i;
		m = xenforeignmemory_map(fm, dom, PROT_READ, n, cand, err);
		if (!m) {
			*map_errno = errno;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			long k;

			if (err[i]) {
				if (!*map_errno)
					*map_errno = -err[i];
				continue;
			}
			mapped_any = 1;
			k = signature((uint64_t *)(m + i * psz));
			if (k >= 0 && !mfn[k]) {
				mfn[k] = cand[i];
				found++;
			}
		}
		xenforeignmemory_unmap(fm, m, n);
		if (!mapped_any && *map_errno == ESRCH)
			break;	/* Xen refuses this domain id outright */
	}
	return found;
}

static void rounds(xenforeignmemory_handle *fm, uint32_t dom, xen_pfn_t *mfn)
{
	struct xps_check rd, wr;
	int err[NB];

	xps_begin(&rd, "foreign-map-read");
	xps_begin(&wr, "foreign-map-write");
	for (uint64_t r = 0; r < 20 && !rd.bad && !wr.bad; r++) {
		unsigned char *m, *one[NB];

		sign(2000 + r);
		m = xenforeignmemory_map(fm, dom, PROT_READ | PROT_WRITE, NB, mfn, err);
		if (!m)
			XPS_DIE(&rd, "round %llu: map: %s", (unsigned long long)r, strerror(errno));
		for (size_t i = 0; i < NB; i++)
			if (err[i])
				XPS_DIE(&rd, "round %llu: frame %#llx: error %d",
					(unsigned long long)r, (unsigned long long)mfn[i], err[i]);
		if (memcmp(m, buf, NB * psz))
			xps_bad(&rd, "round %llu: the foreign mapping differs from the buffer",
				(unsigned long long)r);
		/* Odd pages written through the foreign mapping. */
		for (size_t i = 1; i < NB; i += 2)
			xps_fill(m + i * psz + 64, psz - 64, 3000 + r, i * xps_wpp() + 8);
		for (size_t i = 1; i < NB; i += 2)
			if (xps_cmp(buf + i * psz + 64, psz - 64, 3000 + r,
				    i * xps_wpp() + 8) >= 0)
				xps_bad(&wr,
					"round %llu: a write through the foreign mapping is not in buffer page %zu",
					(unsigned long long)r, i);
		if (xenforeignmemory_unmap(fm, m, NB))
			XPS_DIE(&rd, "unmap: %s", strerror(errno));

		/* One mapping per page, unmapped in reverse order. */
		for (size_t i = 0; i < NB; i++) {
			one[i] = xenforeignmemory_map(fm, dom, PROT_READ, 1, &mfn[i], &err[i]);
			if (!one[i] || err[i])
				XPS_DIE(&rd, "round %llu: map of page %zu: %s",
					(unsigned long long)r, i,
					one[i] ? strerror(-err[i]) : strerror(errno));
			if (memcmp(one[i], buf + i * psz, psz))
				xps_bad(&rd, "round %llu: single-page mapping %zu differs",
					(unsigned long long)r, i);
		}
		for (size_t i = NB; i-- > 0;)
			if (xenforeignmemory_unmap(fm, one[i], 1))
				XPS_DIE(&rd, "unmap: %s", strerror(errno));

		/* The buffer keeps the foreign writes and takes its own. */
		for (size_t i = 0; i < NB; i++) {
			uint64_t seed = i % 2 ? 3000 + r : 2000 + r;

			if (xps_cmp(buf + i * psz + 64, psz - 64, seed, i * xps_wpp() + 8) >= 0)
				xps_bad(&wr, "round %llu: buffer page %zu changed after the unmap",
					(unsigned long long)r, i);
		}
		xps_fill(buf, NB * psz, 4000 + r, 0);
		if (xps_cmp(buf, NB * psz, 4000 + r, 0) >= 0)
			xps_bad(&wr, "round %llu: the buffer does not take its own writes",
				(unsigned long long)r);
	}
	xps_end(&rd);
	xps_end(&wr);
}

int main(void)
{
	struct xps_check c;
	xenforeignmemory_handle *fm;
	xc_interface *xch;
	xen_pfn_t pfn[NB], mfn[NB] = { 0 };
	unsigned long max_mfn = 0;
	uint32_t doms[2] = { DOMID_SELF, 0 }, dom = DOMID_SELF;
	int found = 0, errs[2] = { 0, 0 };

	psz = xps_page_size();
	xps_begin(&c, "foreign-find-frames");
	if (access("/dev/xen/privcmd", R_OK | W_OK))
		XPS_DIE(&c, "cannot run because /dev/xen/privcmd is not usable: %s",
			strerror(errno));
	xch = xc_interface_open(NULL, NULL, 0);
	fm = xenforeignmemory_open(NULL, 0);
	if (!xch || !fm)
		XPS_DIE(&c, "cannot run because xc_interface_open or xenforeignmemory_open failed");
	if (xc_maximum_ram_page(xch, &max_mfn))
		XPS_DIE(&c, "XENMEM_maximum_ram_page: %s", strerror(errno));
	buf = xps_map(&c, NB * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (mlock(buf, NB * psz))
		XPS_DIE(&c, "mlock: %s", strerror(errno));
	nonce = xps_word((uint64_t)time(NULL), (uint64_t)getpid());
	sign(1999);
	if (pagemap_pfns(&c, pfn))
		XPS_DIE(&c, "cannot run because /proc/self/pagemap hides PFNs (needs root)");
	printf("# foreign: buffer PFNs %#llx.., maximum machine frame %#lx\n",
	       (unsigned long long)pfn[0], max_mfn);
	try_direct(fm, 0, pfn, "PFNs as frames");
	try_direct(fm, DOMID_SELF, pfn, "PFNs as frames");

	for (int k = 0; k < 2 && found < NB; k++) {
		memset(mfn, 0, sizeof(mfn));
		found = scan(fm, doms[k], max_mfn, mfn, &errs[k]);
		dom = doms[k];
		printf("# foreign: machine frame search as domid %#x: %d of %d pages found%s%s\n",
		       doms[k], found, NB, errs[k] ? ", some maps failed: " : "",
		       errs[k] ? strerror(errs[k]) : "");
	}
	if (found < NB)
		XPS_DIE(&c,
			"found %d of %d buffer pages among machine frames 256..%#lx (DOMID_SELF: %s; domid 0: %s)",
			found, NB, max_mfn,
			errs[0] ? strerror(errs[0]) : "no error",
			errs[1] ? strerror(errs[1]) : "no error");
	xps_end(&c);
	rounds(fm, dom, mfn);
	xenforeignmemory_close(fm);
	xc_interface_close(xch);
	return xps_exit_status();
}
