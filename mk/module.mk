# mk/module.mk - build targets for the xen_ptswap module, included by the
# top-level Makefile.
#
#   make module         build xen_ptswap.ko against $(KDIR), and the KUnit
#                       suite xen_ptswap_kunit.ko if $(KDIR) has CONFIG_KUNIT
#   make module-clean   remove what `make module` built
#   make module-dkms-src  copy the DKMS source tree to
#                       $(DESTDIR)/usr/src/xen-ptswap-<version>, ready
#                       for `dkms add -m xen-ptswap -v <version>`
#
# KDIR is the kernel build tree, by default the running kernel's.  The
# module builds against any x86-64 tree with CONFIG_XEN_PV; without the
# ptep_get_and_clear pv-op (test/linux-patch/) it refuses to load.

KDIR ?= /lib/modules/$(shell uname -r)/build
XPS_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
XPS_DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' \
		      $(XPS_TOP)/dkms.conf)
XPS_DKMS_SRC := $(DESTDIR)/usr/src/xen-ptswap-$(XPS_DKMS_VERSION)

.PHONY: module module-clean module-dkms-src

module:
	$(MAKE) -C $(KDIR) M=$(XPS_TOP) modules

module-clean:
	$(MAKE) -C $(KDIR) M=$(XPS_TOP) clean

module-dkms-src:
	rm -rf $(XPS_DKMS_SRC)
	mkdir -p $(XPS_DKMS_SRC)
	cp -r $(XPS_TOP)/dkms.conf $(XPS_TOP)/Kbuild $(XPS_TOP)/module \
		$(XPS_TOP)/include $(XPS_DKMS_SRC)/
