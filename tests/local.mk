# tests/: checks of the tree itself. layering.sh keeps each room to its own and the other
# rooms' public headers; layering-selftest.sh proves it rejects each kind of violation.
# discovery-port.sh keeps test targets off the shared discovery port 8009.
TESTS += tests/layering.sh tests/layering-selftest.sh tests/discovery-port.sh
dist_check_SCRIPTS += tests/layering.sh tests/layering-selftest.sh tests/discovery-port.sh
# stats-snapshot.py reads one snapshot of the target's statistics socket for the tests.
EXTRA_DIST += tests/stats-snapshot.py
EXTRA_DIST += tests/README.md
