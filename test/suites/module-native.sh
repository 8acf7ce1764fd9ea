#!/bin/bash
# test/suites/module-native.sh - module.sh under a different lab boot (see
# SUITES): module.sh picks its checks from $XPS_LAB_XEN/$XPS_LAB_KERNEL.
exec /bin/bash "$(dirname "$0")/module.sh" "$@"
