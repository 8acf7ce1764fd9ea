#!/bin/bash
# test/suites/module-feature-only.sh - module.sh under --xen feature-only
# (see SUITES): Xen advertises XENFEAT_mmu_pt_update_swap without the
# sub-op, and the module's load-time probe must refuse to load.
exec /bin/bash "$(dirname "$0")/module.sh" "$@"
