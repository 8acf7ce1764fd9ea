# xen-ptswap top-level Makefile.
#
#   make lab      the project's main job: build and boot the lab (Xen plus a
#                 PV Dom0 under QEMU), run the A/B benchmark with and
#                 without the module and the native floor, print the table
#                 (Debian 12's stack, Xen 4.17 + Linux 6.1; STACK=NAME for
#                 another of test/lab/stacks/: debian13, qubes-4.2,
#                 qubes-4.3, xen-4.22; STACK=staging: Xen staging +
#                 Linux 6.12; see tools/lab-ab.sh)
#   make check    the tests: checkpatch (test/checkpatch), the lab's
#                 self-test and every suite in test/suites/SUITES, each in
#                 a lab boot; ends with "N passed, N failed"
#   make module   build xen_ptswap.ko against KDIR (see mk/module.mk)
#   make kernel-deb [LINUX=6.1|6.12|7.3] [KCONFIG=file|lab]
#                 [KDEB_CONFIG_ONLY=1] [KDEB_DIR=dir]
#                 [KDEB_LOCALVERSION=-suffix] [KTREE=dir|lab]
#                 Debian packages (linux-image, linux-headers) of Debian's
#                 linux-source-LINUX with its series test/linux-patch/LINUX/,
#                 by the kernel's `make bindeb-pkg`, on a Debian 12 or 13
#                 host; default config: the running kernel's
#                 (/boot/config-$(uname -r)) plus the options the series
#                 needs, and LINUX its version; KCONFIG=lab: the lab's
#                 QEMU-sized one, only when asked for; KDEB_CONFIG_ONLY=1:
#                 the checked .config only; .debs in out/kernel-deb/
#                 (mk/kernel-deb.sh, docs/kernel-deb.md)
#   make deb [DEB_DIR=dir]
#                 Debian packages of the module and the tools:
#                 xen-ptswap-dkms (DKMS source, modprobe defaults, a
#                 disabled modules-load.d file) and xen-ptswap-tools
#                 (xen-ptswap status, ab-run, the bpftrace scripts), from
#                 mk/debian/; .debs in out/deb/ (mk/deb.mk, mk/deb.sh);
#                 as root it apt-installs what the build needs
#
# Both `lab` and `check` need root on Debian 12: the lab installs what it
# needs with apt-get and caches builds in /var/cache/xen-ptswap.

.PHONY: all lab check kernel-deb

all: module

lab:
	$(if $(STACK),AB_STACK=$(STACK)) tools/lab-ab.sh

check:
	test/check

KDEB_DIR ?= out/kernel-deb
KDEB_ARGS = $(if $(LINUX),--linux '$(LINUX)') --out '$(KDEB_DIR)' \
	$(if $(KCONFIG),--config '$(KCONFIG)') $(if $(KTREE),--tree '$(KTREE)') \
	$(if $(KDEB_LOCALVERSION),--localversion '$(KDEB_LOCALVERSION)') \
	$(if $(KDEB_CONFIG_ONLY),--config-only)
kernel-deb:
	mk/kernel-deb.sh $(strip $(KDEB_ARGS))

include mk/module.mk
include mk/deb.mk
