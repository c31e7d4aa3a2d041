# tests/: checks of the tree itself. layering.sh keeps each room to its own and the other
# rooms' public headers; layering-selftest.sh proves it rejects each kind of violation.
# discovery-port.sh keeps test targets off the shared discovery port 8009.
TESTS += tests/layering.sh tests/layering-selftest.sh tests/discovery-port.sh
dist_check_SCRIPTS += tests/layering.sh tests/layering-selftest.sh tests/discovery-port.sh
# callgraph.sh: the built libraries keep the layers of callgraph.conf (no call up or
# sideways, no circle of more than 8 files); callgraph-selftest.sh proves it rejects each.
TESTS += tests/callgraph.sh tests/callgraph-selftest.sh
dist_check_SCRIPTS += tests/callgraph.sh tests/callgraph-selftest.sh
EXTRA_DIST += tests/callgraph.py tests/callgraph.conf
# lab-package-check.sh: the qemu lab names each host package it misses, and never ends
# without a word (a fake dpkg-query and apt-get on PATH).
TESTS += tests/lab-package-check.sh
dist_check_SCRIPTS += tests/lab-package-check.sh
# stats-snapshot.py reads one snapshot of the target's statistics socket for the tests.
EXTRA_DIST += tests/stats-snapshot.py
# require.sh: what a test needs before it can run (a skip, or a failure under CI=true).
EXTRA_DIST += tests/require.sh
# README.md: what each test checks.
EXTRA_DIST += tests/README.md
