# target/ reactors, the NVMe/TCP transport and the daemon's main().
noinst_LTLIBRARIES += libnvmeof_reactor.la libnvmeof_tcp.la
libnvmeof_reactor_la_SOURCES = \
	target/reactor.c target/reactor.h
libnvmeof_reactor_la_LIBADD = $(EV_LIBS)
libnvmeof_tcp_la_SOURCES = \
	target/transport.h target/transport.c \
	target/tcp_transport.h target/tcp_internal.h \
	target/tcp_transport.c target/tcp_qpair.c target/tcp_recv.c target/tcp_send.c

sbin_PROGRAMS += target/nvmeof-target
target_nvmeof_target_SOURCES = target/main.c target/cli_opts.c target/cli_opts.h \
	target/stats.c target/stats.h
target_nvmeof_target_LDADD = libnvmeof_config.la libnvmeof_iscsi.la libnvmeof_tcp.la \
	libnvmeof_core.la libnvmeof_bdev.la libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) \
	$(URING_LIBS) $(JSONC_LIBS) $(OPENSSL_LIBS) $(ISAL_LIBS)
dist_man_MANS += man/nvmeof-target.8

# Unit tests: reactors.
check_PROGRAMS += tests/unit/target/reactor_ut
TESTS += tests/unit/target/reactor_ut
tests_unit_target_reactor_ut_SOURCES = tests/unit/target/reactor_ut.c
tests_unit_target_reactor_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_reactor_ut_LDADD = libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) \
	$(UT_LIBS)

# Unit tests: the NVMe/TCP transport over a socketpair, the core replaced by a fake.
check_PROGRAMS += tests/unit/target/tcp_recv_ut
TESTS += tests/unit/target/tcp_recv_ut
tests_unit_target_tcp_recv_ut_SOURCES = tests/unit/target/tcp_recv_ut.c
tests_unit_target_tcp_recv_ut_CFLAGS = $(UT_CFLAGS) -I$(top_srcdir)/target
tests_unit_target_tcp_recv_ut_LDADD = libnvmeof_tcp.la libnvmeof_reactor.la libnvmeof_common.la \
	$(EV_LIBS) $(ISAL_LIBS) $(UT_LIBS)

# Unit tests: the statistics counters and socket (stats.c), with real reactors and core.
check_PROGRAMS += tests/unit/target/stats_ut
TESTS += tests/unit/target/stats_ut
tests_unit_target_stats_ut_SOURCES = tests/unit/target/stats_ut.c target/stats.c target/stats.h
tests_unit_target_stats_ut_CFLAGS = $(UT_CFLAGS) -I$(top_srcdir)/target
tests_unit_target_stats_ut_LDADD = libnvmeof_tcp.la libnvmeof_core.la libnvmeof_bdev.la \
	libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) $(URING_LIBS) $(OPENSSL_LIBS) \
	$(ISAL_LIBS) $(UT_LIBS)

# Unit tests: the daemon's command line.
check_PROGRAMS += tests/unit/target/cli_opts_ut
TESTS += tests/unit/target/cli_opts_ut
tests_unit_target_cli_opts_ut_SOURCES = tests/unit/target/cli_opts_ut.c target/cli_opts.c
tests_unit_target_cli_opts_ut_CFLAGS = $(UT_CFLAGS) -I$(top_srcdir)/target
tests_unit_target_cli_opts_ut_LDADD = libnvmeof_common.la $(ISAL_LIBS) $(UT_LIBS)
