# xen-ptswap top-level Makefile.
#
#   make lab      the project's main job: build and boot the lab (Xen plus a
#                 PV Dom0 under QEMU), run the A/B benchmark with and
#                 without the module and the native floor, print the table
#   make check    the tests: checkpatch (test/checkpatch), the lab's
#                 self-test and every suite in test/suites/SUITES, each in
#                 a lab boot; ends with "N passed, N failed"
#   make module   build xen_ptswap.ko against KDIR (see mk/module.mk)
#
# Both `lab` and `check` need root on Debian 12: the lab installs what it
# needs with apt-get and caches builds in /var/cache/xen-ptswap.

.PHONY: all lab check

all: module

lab:
	tools/lab-ab.sh

check:
	test/check

include mk/module.mk
