# tests/integration/: the real daemon on 127.0.0.1 driven by the real initiator.
# Scripts find binaries through $top_builddir (AM_TESTS_ENVIRONMENT).
check_PROGRAMS += tests/integration/initiator_io
tests_integration_initiator_io_SOURCES = tests/integration/initiator_io.c
tests_integration_initiator_io_CFLAGS = $(HOST_CFLAGS)
tests_integration_initiator_io_LDADD = libnvmeof.la

# Raw NVMe/TCP PDU client for tcp_raw_test.sh (common PDU codec only).
check_PROGRAMS += tests/integration/tcp_raw_client
tests_integration_tcp_raw_client_SOURCES = tests/integration/tcp_raw_client.c
tests_integration_tcp_raw_client_LDADD = libnvmeof_common.la $(ISAL_LIBS)

# Fault injection (fault-tcp.sh): hostile hosts, reusing tcp_raw_client.c's PDU routines.
check_PROGRAMS += tests/integration/fault_client
tests_integration_fault_client_SOURCES = tests/integration/fault_client.c
tests_integration_fault_client_LDADD = libnvmeof_common.la $(ISAL_LIBS)
EXTRA_DIST += tests/integration/tcp_raw_client.c
TESTS += tests/integration/fault-tcp.sh
dist_check_SCRIPTS += tests/integration/fault-tcp.sh
# MSG_ZEROCOPY read data (tcp-zerocopy.sh): verified reads, counters, hosts that vanish
# or break with zero-copy sends unconfirmed (fault_client's scenarios).
TESTS += tests/integration/tcp-zerocopy.sh
dist_check_SCRIPTS += tests/integration/tcp-zerocopy.sh

# Read data queued for a host that does not read while its RAM namespace is removed
# (mapped-read.sh), on tcp_raw_client.c's PDU routines.
check_PROGRAMS += tests/integration/mapped_read_client
tests_integration_mapped_read_client_SOURCES = tests/integration/mapped_read_client.c
tests_integration_mapped_read_client_LDADD = libnvmeof_common.la $(ISAL_LIBS)
TESTS += tests/integration/mapped-read.sh
dist_check_SCRIPTS += tests/integration/mapped-read.sh

# DH-HMAC-CHAP against the target (auth-tcp.sh): a raw host that authenticates, fails to
# or stalls, on tcp_raw_client.c's PDU routines and common/dhchap_crypto.
check_PROGRAMS += tests/integration/auth_client
tests_integration_auth_client_SOURCES = tests/integration/auth_client.c
tests_integration_auth_client_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_integration_auth_client_LDADD = libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS)
TESTS += tests/integration/auth-tcp.sh
dist_check_SCRIPTS += tests/integration/auth-tcp.sh
# The nvmeof CLI's --dhchap-secret/--dhchap-ctrl-secret against the target (skipped while
# the CLI has no such option).
TESTS += tests/integration/auth-initiator.sh
dist_check_SCRIPTS += tests/integration/auth-initiator.sh
# 10,000 idle connections (idle-conns.sh): resident memory, and a fresh host served.
check_PROGRAMS += tests/integration/idle_conns
tests_integration_idle_conns_SOURCES = tests/integration/idle_conns.c
tests_integration_idle_conns_LDADD = libnvmeof_common.la $(ISAL_LIBS)
TESTS += tests/integration/idle-conns.sh
dist_check_SCRIPTS += tests/integration/idle-conns.sh

# SPDK-like hosts (spdk-host.sh): empty Host NQN, AER command ID reused at shutdown.
check_PROGRAMS += tests/integration/spdk_host_client
tests_integration_spdk_host_client_SOURCES = tests/integration/spdk_host_client.c
tests_integration_spdk_host_client_LDADD = libnvmeof_common.la $(ISAL_LIBS)

# Fault injection on the iSCSI portal (fault-iscsi.sh): a raw initiator on the common
# iSCSI PDU codec.
check_PROGRAMS += tests/integration/iscsi_fault_client
tests_integration_iscsi_fault_client_SOURCES = tests/integration/iscsi_fault_client.c
tests_integration_iscsi_fault_client_LDADD = libnvmeof_common.la $(ISAL_LIBS)
TESTS += tests/integration/fault-iscsi.sh
dist_check_SCRIPTS += tests/integration/fault-iscsi.sh

# iSCSI security (iscsi-security.sh): CHAP and mutual CHAP with its own digest arithmetic,
# stalled and silent logins, revocation on SIGHUP, secrets kept out of logs and replies.
check_PROGRAMS += tests/integration/iscsi_chap_client
tests_integration_iscsi_chap_client_SOURCES = tests/integration/iscsi_chap_client.c
tests_integration_iscsi_chap_client_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_integration_iscsi_chap_client_LDADD = libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS)
TESTS += tests/integration/iscsi-security.sh
dist_check_SCRIPTS += tests/integration/iscsi-security.sh

# libnvmeof's SCSI path (iscsi://) against Debian's tgt and nvmeof-target's iSCSI.
check_PROGRAMS += tests/integration/iscsi_init_rw
tests_integration_iscsi_init_rw_SOURCES = tests/integration/iscsi_init_rw.c
tests_integration_iscsi_init_rw_CFLAGS = $(HOST_CFLAGS)
tests_integration_iscsi_init_rw_LDADD = libnvmeof.la

integration_tests = \
	tests/integration/initiator-cli.sh \
	tests/integration/initiator-lib.sh \
	tests/integration/initiator-pkgconfig.sh \
	tests/integration/tcp_raw_test.sh \
	tests/integration/iscsi-tgt-rw.sh \
	tests/integration/iscsi-tgt-nvmeof.sh \
	tests/integration/bench-quick.sh \
	tests/integration/bench-queues.sh \
	tests/integration/tcp-ceiling.sh \
	tests/integration/cli-commands.sh \
	tests/integration/ctl-live.sh \
	tests/integration/revoke.sh \
	tests/integration/spdk-host.sh \
	tests/integration/first-contact.sh \
	tests/integration/metrics.sh \
	tests/integration/qos.sh \
	tests/integration/ptpl.sh \
	tests/integration/ctl-sessions.sh
TESTS += $(integration_tests)
dist_check_SCRIPTS += $(integration_tests)
EXTRA_DIST += tests/integration/lib.sh

# DH-HMAC-CHAP between the nvmeof CLI and nvmeof-target (hosts[].dhchap in the config).
TESTS += tests/integration/auth-loop.sh
dist_check_SCRIPTS += tests/integration/auth-loop.sh

# libiscsi's compliance suite against the daemon (skipped without iscsi-test-cu).
TESTS += tests/integration/iscsi-compliance.sh
dist_check_SCRIPTS += tests/integration/iscsi-compliance.sh

# Reconnect through target restarts (reconnect.sh): pattern writer and checker.
check_PROGRAMS += tests/integration/reconnect_client
tests_integration_reconnect_client_SOURCES = tests/integration/reconnect_client.c
tests_integration_reconnect_client_CFLAGS = $(HOST_CFLAGS)
tests_integration_reconnect_client_LDADD = libnvmeof.la
TESTS += tests/integration/reconnect.sh
dist_check_SCRIPTS += tests/integration/reconnect.sh

# NVMe/TCP over TLS 1.3 (tls.sh): PSK identities v0/v1, both suites, refusals, s_client.
TESTS += tests/integration/tls.sh
dist_check_SCRIPTS += tests/integration/tls.sh

# File namespaces use O_DIRECT by default, buffered_io on request (direct-io.sh): page
# cache and daemon RSS after 512 MiB through the target, bad paths refused.
TESTS += tests/integration/direct-io.sh
dist_check_SCRIPTS += tests/integration/direct-io.sh
