# mk/deb.mk - `make deb`: the Debian packages xen-ptswap-dkms and
# xen-ptswap-tools (packaging in mk/debian/, built by mk/deb.sh), included
# by the top-level Makefile.
#
#   make deb [DEB_DIR=dir]   .debs in DEB_DIR (default out/deb/); as root
#                            it apt-installs missing build dependencies,
#                            otherwise it names them and stops

DEB_DIR ?= out/deb

.PHONY: deb

deb:
	mk/deb.sh --out '$(DEB_DIR)'
