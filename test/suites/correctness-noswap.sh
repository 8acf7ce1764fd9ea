#!/bin/bash
# test/suites/correctness-noswap.sh - test/suites/correctness.sh in the
# "noswap" module configuration (the stock-Xen mode; see that script);
# listed in SUITES.
exec bash "$(dirname "${BASH_SOURCE[0]}")/correctness.sh" noswap
