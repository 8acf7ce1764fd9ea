// SPDX-License-Identifier: MIT
/*
 * xen_console - read Xen's console ring from Dom0 (XEN_SYSCTL_readconsole)
 * and look for hypervisor trouble, so that the suite catches it on a real
 * Dom0 too, where nobody scans a serial log.  Not a caller path: the
 * suite's helper.
 *
 * Usage: xen_console clear   read and clear the ring (start of a run)
 *        xen_console check   FAIL if the ring holds a Xen crash or an L1
 *                            validation error, PASS otherwise
 * Check:
 *  xen-console-clean   no "Bad L1 flags", "FATAL TRAP", "Panic on CPU",
 *                      "Xen BUG at", "Xen call trace", "Assertion '" or
 *                      "Error getting mfn" in the ring since "clear"
 * Exit status 0 if the check passed (or the ring was cleared).
 */
#include "xps_check.h"

#include <xenctrl.h>

#define RING (1024 * 1024)	/* bytes of the console ring read */

static const char *const bad[] = {
	"Bad L1 flags", "FATAL TRAP", "Panic on CPU", "Xen BUG at",
	"Xen call trace", "Assertion '",
};

int main(int argc, char **argv)
{
	struct xps_check c;
	xc_interface *xch;
	unsigned int size = RING - 1;
	char *ring = calloc(1, RING);
	int clear;

	if (argc != 2 || (strcmp(argv[1], "clear") && strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: %s clear|check\n", argv[0]);
		return 2;
	}
	clear = !strcmp(argv[1], "clear");
	xps_begin(&c, "xen-console-clean");
	if (!ring)
		XPS_DIE(&c, "calloc: out of memory");
	xch = xc_interface_open(NULL, NULL, 0);
	if (!xch)
		XPS_DIE(&c, "cannot run because xc_interface_open failed: %s", strerror(errno));
	if (xc_readconsolering(xch, ring, &size, clear, 0, NULL))
		XPS_DIE(&c, "cannot run because XEN_SYSCTL_readconsole failed: %s",
			strerror(errno));
	ring[size] = '\0';
	xc_interface_close(xch);
	if (clear)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
		char *hit = strstr(ring, bad[k]), *end;

		if (!hit)
			continue;
		while (hit > ring && hit[-1] != '\n')
			hit--;
		end = strchr(hit, '\n');
		if (end)
			*end = '\0';
		xps_bad(&c, "%s", hit);
	}
	xps_end(&c);
	return xps_exit_status();
}
