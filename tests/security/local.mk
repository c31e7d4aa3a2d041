# tests/security/: the attack suite. Each test reproduces one way a host, allowed or not,
# could deny the others service, hold the daemon's resources for ever or learn what it may
# not, against the real daemon on 127.0.0.1. Every loop is bounded in count and time, and
# each test stops every process it started. See tests/security/README.md.
security_tests =
TESTS += $(security_tests)
dist_check_SCRIPTS += $(security_tests)
security_tests += tests/security/ctl-pipeline.sh
security_tests += tests/security/metrics-slowloris.sh
security_tests += tests/security/iscsi-hoard.sh
security_tests += tests/security/iscsi-stall-timers.sh
security_tests += tests/security/iscsi-idle-cost.sh
security_tests += tests/security/dhchap-flood.sh
check_PROGRAMS += tests/security/dh_derive_cost
tests_security_dh_derive_cost_SOURCES = tests/security/dh_derive_cost.c
tests_security_dh_derive_cost_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_security_dh_derive_cost_LDADD = libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS)
security_tests += tests/security/tls-downgrade.sh
security_tests += tests/security/state-dir.sh
security_tests += tests/security/disc-notify.sh
security_tests += tests/security/kato-max.sh
security_tests += tests/security/disc-filter.sh
security_tests += tests/security/tcp-pool-hoard.sh
security_tests += tests/security/tcp-abort-park.sh
security_tests += tests/security/tcp-host-conn-limit.sh
