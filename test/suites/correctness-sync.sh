#!/bin/bash
# test/suites/correctness-sync.sh - test/suites/correctness.sh in the
# "sync" module configuration (see that script); listed in SUITES.
exec bash "$(dirname "${BASH_SOURCE[0]}")/correctness.sh" sync
