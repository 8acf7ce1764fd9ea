#!/bin/bash
# test/suites/correctness-unloaded.sh - test/suites/correctness.sh in the
# "unloaded" module configuration (see that script); listed in SUITES.
exec bash "$(dirname "${BASH_SOURCE[0]}")/correctness.sh" unloaded
