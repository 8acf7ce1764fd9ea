#!/bin/bash
# test/suites/xen-swap-stock.sh - xen-swap.sh booted on stock Xen (see
# SUITES): xen-swap.sh picks its checks from $XPS_LAB_XEN.
exec /bin/bash "$(dirname "$0")/xen-swap.sh" "$@"
