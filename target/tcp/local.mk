# target/tcp/: the NVMe/TCP transport (ICReq, the PDU receive machine, R2T/H2CData,
# C2HData, digests, the send path).
noinst_LTLIBRARIES += libnvmeof_tcp.la
libnvmeof_tcp_la_SOURCES = \
	target/tcp/tcp_transport.h target/tcp/tcp_internal.h \
	target/tcp/tcp_transport.c target/tcp/tcp_qpair.c target/tcp/tcp_req.c \
	target/tcp/tcp_recv.c target/tcp/tcp_send.c \
	target/tcp/tcp_sock.c target/tcp/tcp_tls.c target/tcp/tcp_zerocopy.c
libnvmeof_tcp_la_CFLAGS = $(TARGET_CFLAGS) $(OPENSSL_CFLAGS)
libnvmeof_tcp_la_LIBADD = $(OPENSSL_LIBS)

# Unit tests: the transport over a socketpair, the core replaced by a fake
# (tests/unit/target/tcp/tcp_ut_host.c); connection/PDU level and data paths.
tcp_ut_host_sources = tests/unit/target/tcp/tcp_ut_host.c tests/unit/target/tcp/tcp_ut_host.h \
	target/core/transport.c
tcp_ut_host_libs = libnvmeof_tcp.la libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) \
	$(ISAL_LIBS) $(OPENSSL_LIBS) $(UT_LIBS)
check_PROGRAMS += tests/unit/target/tcp/tcp_recv_ut tests/unit/target/tcp/tcp_data_ut
TESTS += tests/unit/target/tcp/tcp_recv_ut tests/unit/target/tcp/tcp_data_ut
tests_unit_target_tcp_tcp_recv_ut_SOURCES = tests/unit/target/tcp/tcp_recv_ut.c \
	$(tcp_ut_host_sources)
tests_unit_target_tcp_tcp_recv_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_tcp_tcp_recv_ut_LDADD = $(tcp_ut_host_libs)
tests_unit_target_tcp_tcp_data_ut_SOURCES = tests/unit/target/tcp/tcp_data_ut.c \
	$(tcp_ut_host_sources)
tests_unit_target_tcp_tcp_data_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_tcp_tcp_data_ut_LDADD = $(tcp_ut_host_libs)

# The data plan and the request state machine on their own: tcp_req.c with its neighbours
# (send path, connection teardown, the core) replaced by recording stubs.
check_PROGRAMS += tests/unit/target/tcp/tcp_req_ut
TESTS += tests/unit/target/tcp/tcp_req_ut
tests_unit_target_tcp_tcp_req_ut_SOURCES = tests/unit/target/tcp/tcp_req_ut.c \
	target/tcp/tcp_req.c
tests_unit_target_tcp_tcp_req_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_tcp_tcp_req_ut_LDADD = libnvmeof_reactor.la libnvmeof_common.la \
	$(EV_LIBS) $(ISAL_LIBS) $(UT_LIBS)

# TLS on the target: the handshake machine, detection and refusals, both identity versions
# and suites through the socket seam (tcp_tls.c), over the same harness.
check_PROGRAMS += tests/unit/target/tcp/tcp_tls_ut
TESTS += tests/unit/target/tcp/tcp_tls_ut
tests_unit_target_tcp_tcp_tls_ut_SOURCES = tests/unit/target/tcp/tcp_tls_ut.c \
	$(tcp_ut_host_sources)
tests_unit_target_tcp_tcp_tls_ut_CFLAGS = $(UT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_target_tcp_tcp_tls_ut_LDADD = $(tcp_ut_host_libs)

# MSG_ZEROCOPY confirmation bookkeeping (tcp_zerocopy.c): send numbers, ranges in and out
# of order, the 32-bit wrap.
check_PROGRAMS += tests/unit/target/tcp/tcp_zc_ut
TESTS += tests/unit/target/tcp/tcp_zc_ut
tests_unit_target_tcp_tcp_zc_ut_SOURCES = tests/unit/target/tcp/tcp_zc_ut.c \
	target/tcp/tcp_zerocopy.c target/tcp/tcp_sock.c
tests_unit_target_tcp_tcp_zc_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_tcp_tcp_zc_ut_LDADD = libnvmeof_common.la $(EV_LIBS) $(UT_LIBS)
