# tests/security/: the attack suite. Each test reproduces one way a host, allowed or not,
# could deny the others service, hold the daemon's resources for ever or learn what it may
# not, against the real daemon on 127.0.0.1. Every loop is bounded in count and time, and
# each test stops every process it started. See tests/security/README.md.
security_tests =
TESTS += $(security_tests)
dist_check_SCRIPTS += $(security_tests)
security_tests += tests/security/tcp-pool-hoard.sh
security_tests += tests/security/tcp-abort-park.sh
security_tests += tests/security/tcp-host-conn-limit.sh
