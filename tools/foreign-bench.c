// SPDX-License-Identifier: MIT
/*
 * foreign-bench.c - map a domain's frames read-only in batches, then unmap
 * every batch: the PTE-clearing half of a migration sender's profile.
 *
 * Usage: foreign-bench [-d DOMID] [-b BATCH] [-n FRAMES] [-r RUNS] [-m]
 *                      [--pre CMD] [--post CMD]
 *   -d DOMID  domain whose frames to map; default 0 (Dom0 maps its own)
 *   -b BATCH  frames per xenforeignmemory_map() call; default 1024 (the
 *             batch size of libxenguest's migration stream)
 *   -n FRAMES map at most this many frames; default: all of the domain's
 *             pages (tot_pages from XEN_DOMCTL_getdomaininfo)
 *   -r RUNS   repetitions of map-all/unmap-all; default 3
 *   -m        machine-readable "result ..." and "summary ..." lines
 *   --pre CMD, --post CMD
 *             shell command run just before / just after the timed unmap
 *             phase (outside it), with BENCH_RUN and BENCH_PHASE=pre|post
 *             in its environment, as in madv-bench; ab-run reads xenperf
 *             counters with it
 *
 * Method (as in the public migration profile): open libxenctrl and
 * libxenforeignmemory, ask for the domain's number of pages, map all of
 * them read-only in batches of BATCH frames, then unmap every batch.  Map
 * and unmap are timed separately with CLOCK_MONOTONIC (ms); to time the
 * whole program as the profile did, run it under `perf stat -r N`.
 * Unmapping is the part this project changes: each batch's munmap() zaps
 * BATCH L1 entries of a VM_PFNMAP mapping in zap_pte_range(), one trapped
 * and emulated PTE write each on an unmodified PV Dom0.
 *
 * Dom0 maps its own frames with DOMID_SELF: Xen refuses a request that
 * names the caller's own domain id as the foreign owner (get_pg_owner()).
 *
 * Which frames: a PV domain's frames are machine frames (MFNs), which user
 * space cannot list for Dom0 itself, so an untimed discovery pass scans
 * machine frames 0..maximum_ram_page and keeps those Xen lets this domain
 * map as the target's (per-frame errors from privcmd's MMAPBATCH_V2 mark
 * the others) until it has the domain's page count.  For an HVM domain the
 * frames are its guest frame numbers 0..nr_gpfns.
 *
 * Errors: when it cannot run here (no /dev/xen/privcmd, not a Xen control
 * domain, no such domain) it says why and exits 77; bad arguments exit 2;
 * a failing map or unmap exits 1.  It writes nothing to the target.
 */
#define _GNU_SOURCE
#include "bench-util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xenctrl.h>
#include <xenforeignmemory.h>

#define DISCOVERY_CHUNK	4096

/* The usage text, after "usage: PROG " (see bench_getopt()). */
static const char usage[] =
	"[-d DOMID] [-b BATCH] [-n FRAMES] [-r RUNS] [-m] [--pre CMD] [--post CMD]\n"
	"  map a domain's frames read-only in batches with libxenforeignmemory,\n"
	"  then unmap every batch; prints map and unmap milliseconds\n";

static int cannot_run(const char *prog, const char *why)
{
	fprintf(stderr, "%s: cannot run here: %s\n", prog, why);
	return BENCH_EXIT_CANNOT_RUN;
}

/*
 * Find up to 'want' frames of domain 'domid' that this domain may map:
 * candidates are 0..limit-1, tried DISCOVERY_CHUNK at a time.
 */
static size_t discover(xenforeignmemory_handle *fmem, uint32_t domid,
		       uint64_t limit, size_t want, xen_pfn_t *out)
{
	xen_pfn_t cand[DISCOVERY_CHUNK];
	int err[DISCOVERY_CHUNK];
	size_t found = 0;

	for (uint64_t base = 0; base < limit && found < want; base += DISCOVERY_CHUNK) {
		size_t n = (size_t)((limit - base) < DISCOVERY_CHUNK ? (limit - base)
								     : DISCOVERY_CHUNK);
		void *p;

		for (size_t i = 0; i < n; i++)
			cand[i] = (xen_pfn_t)(base + i);
		p = xenforeignmemory_map(fmem, domid, PROT_READ, n, cand, err);
		if (!p)
			continue;	/* the whole chunk failed: none mappable */
		for (size_t i = 0; i < n && found < want; i++) {
			if (!err[i])
				out[found++] = cand[i];
		}
		xenforeignmemory_unmap(fmem, p, n);
	}
	return found;
}

int main(int argc, char **argv)
{
	long domid = 0, batch = 1024, runs;
	unsigned long long max_frames = 0;
	int c, hvm;
	uint32_t map_dom;
	xc_interface *xch;
	xenforeignmemory_handle *fmem;
	xc_domaininfo_t info;
	xen_pfn_t *frames;
	size_t nframes, nbatches;
	uint64_t limit, want;
	void **maps;
	int *err;
	double *map_ms, *unmap_ms, disc_ms;
	struct timespec t0, t1, t2;

	struct bench_cli cli = {
		.optstring = "d:b:n:r:mh", .longopts = bench_hook_longopts, .usage = usage,
		.runs = 3, .max_runs = 10000,
	};

	while ((c = bench_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'd':
			domid = strtol(optarg, NULL, 0);
			if (domid < 0 || domid >= 0x7FF0) {
				fprintf(stderr, "%s: bad domain id '%s'\n", argv[0], optarg);
				return 2;
			}
			break;
		case 'b':
			batch = strtol(optarg, NULL, 0);
			if (batch < 1 || batch > (1L << 20)) {
				fprintf(stderr, "%s: bad batch size '%s'\n", argv[0], optarg);
				return 2;
			}
			break;
		case 'n':
			max_frames = strtoull(optarg, NULL, 0);
			if (!max_frames) {
				fprintf(stderr, "%s: bad frame count '%s'\n", argv[0], optarg);
				return 2;
			}
			break;
		}
	}
	runs = cli.runs;

	if (access("/dev/xen/privcmd", R_OK | W_OK))
		return cannot_run(argv[0],
				  "no usable /dev/xen/privcmd (not a Xen domain, or the xen_privcmd driver is not loaded; needs root in Dom0)");
	xch = xc_interface_open(NULL, NULL, 0);
	if (!xch)
		return cannot_run(argv[0],
				  "xc_interface_open failed (needs root in a Xen control domain)");
	fmem = xenforeignmemory_open(NULL, 0);
	if (!fmem)
		return cannot_run(argv[0], "xenforeignmemory_open failed");
	if (xc_domain_getinfolist(xch, (uint32_t)domid, 1, &info) != 1 ||
	    info.domain != domid) {
		char why[96];

		snprintf(why, sizeof(why), "no domain %ld (XEN_DOMCTL_getdomaininfo)", domid);
		return cannot_run(argv[0], why);
	}
	hvm = !!(info.flags & XEN_DOMINF_hvm_guest);
	/* Domain 0 running this maps its own frames: say so with DOMID_SELF. */
	map_dom = domid == 0 ? DOMID_SELF : (uint32_t)domid;
	want = info.tot_pages;
	if (max_frames && max_frames < want)
		want = max_frames;

	if (hvm) {
		xen_pfn_t gpfns = 0;

		if (xc_domain_nr_gpfns(xch, (uint32_t)domid, &gpfns))
			return cannot_run(argv[0], "xc_domain_nr_gpfns failed");
		limit = gpfns;
	} else {
		unsigned long max_mfn = 0;

		if (xc_maximum_ram_page(xch, &max_mfn))
			return cannot_run(argv[0], "XENMEM_maximum_ram_page failed");
		limit = (uint64_t)max_mfn + 1;
	}
	frames = calloc(want ? want : 1, sizeof(*frames));
	if (!frames) {
		perror("calloc");
		return 1;
	}
	now(&t0);
	nframes = discover(fmem, map_dom, limit, want, frames);
	now(&t1);
	disc_ms = ms_between(&t0, &t1);
	if (!nframes)
		return cannot_run(argv[0], "no frame of that domain could be mapped");
	nbatches = (nframes + (size_t)batch - 1) / (size_t)batch;
	maps = calloc(nbatches, sizeof(*maps));
	err = calloc((size_t)batch, sizeof(*err));
	map_ms = calloc((size_t)runs, sizeof(*map_ms));
	unmap_ms = calloc((size_t)runs, sizeof(*unmap_ms));
	if (!maps || !err || !map_ms || !unmap_ms) {
		perror("calloc");
		return 1;
	}
	if (!cli.machine)
		fprintf(stdout,
			"%s: domain %ld (%s, %llu pages): %zu frames found in %s frames 0..%llu (untimed discovery, %.0f ms); %ld run(s) of map + unmap in %zu batches of %ld\n",
			argv[0], domid, hvm ? "HVM" : "PV", (unsigned long long)info.tot_pages,
			nframes, hvm ? "guest" : "machine", (unsigned long long)limit - 1,
			disc_ms, runs, nbatches, batch);

	for (long r = 0; r < runs; r++) {
		size_t failed = 0;

		now(&t0);
		for (size_t b = 0; b < nbatches; b++) {
			size_t first = b * (size_t)batch;
			size_t n = nframes - first < (size_t)batch ? nframes - first
								   : (size_t)batch;

			maps[b] = xenforeignmemory_map(fmem, map_dom, PROT_READ, n,
						       &frames[first], err);
			if (!maps[b]) {
				fprintf(stderr, "%s: map of batch %zu: %s\n",
					argv[0], b, strerror(errno));
				return 1;
			}
			for (size_t i = 0; i < n; i++)
				failed += err[i] != 0;
		}
		now(&t1);
		map_ms[r] = ms_between(&t0, &t1);
		if (cli.pre && run_hook(cli.pre, (int)r + 1, "pre") != 0)
			fprintf(stderr, "%s: warning: --pre hook failed\n", argv[0]);
		now(&t1);
		for (size_t b = 0; b < nbatches; b++) {
			size_t first = b * (size_t)batch;
			size_t n = nframes - first < (size_t)batch ? nframes - first
								   : (size_t)batch;

			if (xenforeignmemory_unmap(fmem, maps[b], n)) {
				fprintf(stderr, "%s: unmap of batch %zu: %s\n",
					argv[0], b, strerror(errno));
				return 1;
			}
		}
		now(&t2);
		if (cli.post && run_hook(cli.post, (int)r + 1, "post") != 0)
			fprintf(stderr, "%s: warning: --post hook failed\n", argv[0]);
		unmap_ms[r] = ms_between(&t1, &t2);
		if (cli.machine)
			fprintf(stdout,
				"result domid=%ld frames=%zu batch=%ld run=%ld map_ms=%.3f unmap_ms=%.3f total_ms=%.3f failed=%zu\n",
				domid, nframes, batch, r + 1, map_ms[r], unmap_ms[r],
				map_ms[r] + unmap_ms[r], failed);
		else
			printf("run %ld: map %.3f ms, unmap %.3f ms, total %.3f ms%s\n", r + 1,
			       map_ms[r], unmap_ms[r], map_ms[r] + unmap_ms[r],
			       failed ? " (some frames failed to map)" : "");
		fflush(stdout);
	}
	if (cli.machine)
		fprintf(stdout,
			"summary domid=%ld frames=%zu batch=%ld runs=%ld map_median_ms=%.3f unmap_median_ms=%.3f\n",
			domid, nframes, batch, runs, median(map_ms, (size_t)runs),
			median(unmap_ms, (size_t)runs));
	else
		printf("median: map %.3f ms, unmap %.3f ms (%.1f ns per unmapped PTE)\n",
		       median(map_ms, (size_t)runs), median(unmap_ms, (size_t)runs),
		       median(unmap_ms, (size_t)runs) * 1e6 / (double)nframes);

	xenforeignmemory_close(fmem);
	xc_interface_close(xch);
	return 0;
}
