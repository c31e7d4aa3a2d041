# target/daemon/: nvmeof-target itself: main(), the command line, service plumbing
# (pidfile, syslog, sd_notify) and the statistics socket.
noinst_LTLIBRARIES += libnvmeof_daemon.la
libnvmeof_daemon_la_SOURCES = \
	target/daemon/cli_opts.c target/daemon/cli_opts.h \
	target/daemon/service.c target/daemon/service.h \
	target/daemon/stats.c target/daemon/stats.h \
	target/daemon/control.c target/daemon/control.h target/daemon/control_internal.h \
	target/daemon/control_model.c target/daemon/control_access.c target/daemon/control_sessions.c \
	target/daemon/control_ana.c target/daemon/control_qos.c target/daemon/control_server.c \
	target/daemon/metrics.c target/daemon/metrics.h
libnvmeof_daemon_la_CFLAGS = $(TARGET_CFLAGS) $(JSONC_CFLAGS) $(MHD_CFLAGS)
libnvmeof_daemon_la_LIBADD = $(MHD_LIBS)

sbin_PROGRAMS += target/nvmeof-target
target_nvmeof_target_SOURCES = target/daemon/main.c
target_nvmeof_target_CFLAGS = $(TARGET_CFLAGS)
target_nvmeof_target_LDADD = libnvmeof_daemon.la libnvmeof_config.la libnvmeof_iscsi.la \
	libnvmeof_scsi.la libnvmeof_tcp.la
if HAVE_RDMA
target_nvmeof_target_LDADD += libnvmeof_rdma.la
endif
target_nvmeof_target_LDADD += libnvmeof_core.la libnvmeof_bdev.la libnvmeof_reactor.la \
	libnvmeof_common.la $(EV_LIBS) $(URING_LIBS) $(JSONC_LIBS) $(OPENSSL_LIBS) \
	$(ISAL_LIBS) $(RDMA_LIBS)
dist_man_MANS += man/nvmeof-target.8

# Unit tests: the statistics counters and socket, with real reactors and core.
check_PROGRAMS += tests/unit/target/daemon/stats_ut
TESTS += tests/unit/target/daemon/stats_ut
tests_unit_target_daemon_stats_ut_SOURCES = tests/unit/target/daemon/stats_ut.c
tests_unit_target_daemon_stats_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_daemon_stats_ut_LDADD = libnvmeof_daemon.la libnvmeof_tcp.la
if HAVE_RDMA
tests_unit_target_daemon_stats_ut_LDADD += libnvmeof_rdma.la
endif
tests_unit_target_daemon_stats_ut_LDADD += \
	libnvmeof_core.la libnvmeof_bdev.la libnvmeof_reactor.la libnvmeof_common.la \
	$(EV_LIBS) $(URING_LIBS) $(OPENSSL_LIBS) $(ISAL_LIBS) $(RDMA_LIBS) $(UT_LIBS) -lm

# Unit tests: the daemon's command line.
check_PROGRAMS += tests/unit/target/daemon/cli_opts_ut
TESTS += tests/unit/target/daemon/cli_opts_ut
tests_unit_target_daemon_cli_opts_ut_SOURCES = tests/unit/target/daemon/cli_opts_ut.c \
	target/daemon/cli_opts.c
tests_unit_target_daemon_cli_opts_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_daemon_cli_opts_ut_LDADD = libnvmeof_common.la $(ISAL_LIBS) $(UT_LIBS)

# Daemon mode, pidfile and service-manager notifications.
check_PROGRAMS += tests/unit/target/daemon/service_ut
TESTS += tests/unit/target/daemon/service_ut
tests_unit_target_daemon_service_ut_SOURCES = tests/unit/target/daemon/service_ut.c \
	target/daemon/service.c
tests_unit_target_daemon_service_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_daemon_service_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

# Unit tests: JSON-RPC parsing and dispatch of the control socket, and the socket itself.
check_PROGRAMS += tests/unit/target/daemon/control_ut
TESTS += tests/unit/target/daemon/control_ut
tests_unit_target_daemon_control_ut_SOURCES = tests/unit/target/daemon/control_ut.c
tests_unit_target_daemon_control_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS) \
	-I$(top_srcdir)/target/daemon
tests_unit_target_daemon_control_ut_LDADD = libnvmeof_daemon.la libnvmeof_config.la \
	libnvmeof_iscsi.la libnvmeof_scsi.la libnvmeof_tcp.la
if HAVE_RDMA
tests_unit_target_daemon_control_ut_LDADD += libnvmeof_rdma.la
endif
tests_unit_target_daemon_control_ut_LDADD += libnvmeof_core.la libnvmeof_bdev.la \
	libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) $(URING_LIBS) $(OPENSSL_LIBS) \
	$(ISAL_LIBS) $(JSONC_LIBS) $(RDMA_LIBS) $(UT_LIBS) -lm

# The systemd unit, generated with the sbindir this build installs nvmeof-target to (the
# default prefix gives /usr/local/sbin; --prefix=/usr gives /usr/sbin), installed where
# systemd looks for units of that prefix.
systemdunitdir = $(prefix)/lib/systemd/system
systemdunit_DATA = conf/nvmeof-target.service
CLEANFILES += conf/nvmeof-target.service
conf/nvmeof-target.service: $(top_srcdir)/conf/nvmeof-target.service.in Makefile
	$(AM_V_GEN)mkdir -p conf && sed -e 's|@sbindir[@]|$(sbindir)|g' \
		$(top_srcdir)/conf/nvmeof-target.service.in > $@

# Unit tests: the Prometheus exposition writer and a scrape of a real target.
check_PROGRAMS += tests/unit/target/daemon/metrics_ut
TESTS += tests/unit/target/daemon/metrics_ut
tests_unit_target_daemon_metrics_ut_SOURCES = tests/unit/target/daemon/metrics_ut.c
tests_unit_target_daemon_metrics_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_daemon_metrics_ut_LDADD = libnvmeof_daemon.la libnvmeof_tcp.la
if HAVE_RDMA
tests_unit_target_daemon_metrics_ut_LDADD += libnvmeof_rdma.la
endif
tests_unit_target_daemon_metrics_ut_LDADD += \
	libnvmeof_core.la libnvmeof_bdev.la libnvmeof_reactor.la libnvmeof_common.la \
	$(EV_LIBS) $(URING_LIBS) $(OPENSSL_LIBS) $(ISAL_LIBS) $(MHD_LIBS) $(RDMA_LIBS) \
	$(UT_LIBS) -lm
