#!/bin/bash
# test/suites/correctness-batched.sh - test/suites/correctness.sh in the
# "batched" module configuration (see that script); listed in SUITES.
exec bash "$(dirname "${BASH_SOURCE[0]}")/correctness.sh" batched
