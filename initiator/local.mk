# initiator/: libnvmeof (public API in nvmeof.h), its NVMe/TCP transport, and the CLI.
#
# libnvmeof_initiator.la holds the library's objects so that unit tests can reach
# internal symbols; the installed libnvmeof.la wraps it with the common code and
# exports only the nvmeof_* API.
noinst_LTLIBRARIES += libnvmeof_initiator.la
libnvmeof_initiator_la_SOURCES = \
	initiator/nvmeof.h \
	initiator/internal.h \
	initiator/transport.h \
	initiator/ctrlr.c \
	initiator/fabrics.c \
	initiator/qpair.c \
	initiator/io.c \
	initiator/tcp.c \
	initiator/discovery.c \
	initiator/hostnqn.c \
	initiator/errors.c \
	initiator/log.c \
	initiator/sock.c \
	initiator/iscsi.c initiator/iscsi.h \
	initiator/iscsi_conn.c \
	initiator/iscsi_login.c \
	initiator/iscsi_ctrlr.c \
	initiator/scsi_encap.c initiator/scsi_encap.h \
	initiator/qpair_stats.c
libnvmeof_initiator_la_CFLAGS = $(AM_CFLAGS) $(ISAL_CFLAGS) $(OPENSSL_CFLAGS)

lib_LTLIBRARIES += libnvmeof.la
libnvmeof_la_SOURCES = initiator/nvmeof.h
libnvmeof_la_LIBADD = libnvmeof_initiator.la libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS)
libnvmeof_la_LDFLAGS = -version-info 0:0:0 -export-symbols-regex '^nvmeof_' -no-undefined
include_HEADERS += initiator/nvmeof.h
pkgconfig_DATA += initiator/libnvmeof.pc

EXTRA_DIST += initiator/README.md
dist_man_MANS += man/nvmeof.1

bin_PROGRAMS += initiator/nvmeof
initiator_nvmeof_SOURCES = initiator/cli.c
initiator_nvmeof_LDADD = libnvmeof.la

# nvmeof-bench: native NVMe/TCP vs SCSI over iSCSI (bench.h lists its parts).
bench_sources = initiator/bench.h initiator/bench_hist.h initiator/bench_hist.c \
	initiator/bench_stats.c initiator/bench_run.c initiator/bench_target.c \
	initiator/bench_report.c initiator/bench_svg.c
bin_PROGRAMS += initiator/nvmeof-bench
initiator_nvmeof_bench_SOURCES = initiator/bench_main.c $(bench_sources)
initiator_nvmeof_bench_LDADD = libnvmeof.la -lm
dist_man_MANS += man/nvmeof-bench.1

bench_ut = \
	tests/unit/initiator/bench_hist_ut \
	tests/unit/initiator/bench_stats_ut \
	tests/unit/initiator/bench_run_ut \
	tests/unit/initiator/bench_target_ut \
	tests/unit/initiator/bench_report_ut \
	tests/unit/initiator/bench_svg_ut
check_PROGRAMS += $(bench_ut)
TESTS += $(bench_ut)
bench_ut_libs = libnvmeof.la -lm $(UT_LIBS)
tests_unit_initiator_bench_hist_ut_SOURCES = tests/unit/initiator/bench_hist_ut.c \
	initiator/bench_hist.c initiator/bench_hist.h
tests_unit_initiator_bench_hist_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_hist_ut_LDADD = -lm $(UT_LIBS)
tests_unit_initiator_bench_stats_ut_SOURCES = tests/unit/initiator/bench_stats_ut.c $(bench_sources)
tests_unit_initiator_bench_stats_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_stats_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_run_ut_SOURCES = tests/unit/initiator/bench_run_ut.c $(bench_sources)
tests_unit_initiator_bench_run_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_run_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_target_ut_SOURCES = tests/unit/initiator/bench_target_ut.c \
	$(bench_sources)
tests_unit_initiator_bench_target_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_target_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_report_ut_SOURCES = tests/unit/initiator/bench_report_ut.c \
	$(bench_sources)
tests_unit_initiator_bench_report_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_report_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_svg_ut_SOURCES = tests/unit/initiator/bench_svg_ut.c $(bench_sources)
tests_unit_initiator_bench_svg_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_svg_ut_LDADD = $(bench_ut_libs)

# Unit tests (CUnit), one per source file; fake_target.[ch] plays an NVMe/TCP controller.
initiator_ut_cflags = $(UT_CFLAGS) -I$(top_srcdir)/tests/unit/initiator
initiator_ut_libs = libnvmeof_initiator.la libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS) \
	$(UT_LIBS)
initiator_ut = \
	tests/unit/initiator/tcp_ut \
	tests/unit/initiator/qpair_ut \
	tests/unit/initiator/io_ut \
	tests/unit/initiator/ctrlr_ut \
	tests/unit/initiator/discovery_ut \
	tests/unit/initiator/hostnqn_ut \
	tests/unit/initiator/errors_ut \
	tests/unit/initiator/log_ut
check_PROGRAMS += $(initiator_ut)
TESTS += $(initiator_ut)
tests_unit_initiator_tcp_ut_SOURCES = tests/unit/initiator/tcp_ut.c \
	tests/unit/initiator/fake_target.c tests/unit/initiator/fake_target.h
tests_unit_initiator_tcp_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_tcp_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_qpair_ut_SOURCES = tests/unit/initiator/qpair_ut.c \
	tests/unit/initiator/fake_transport.c tests/unit/initiator/fake_transport.h
tests_unit_initiator_qpair_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_qpair_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_io_ut_SOURCES = tests/unit/initiator/io_ut.c \
	tests/unit/initiator/fake_transport.c tests/unit/initiator/fake_transport.h
tests_unit_initiator_io_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_io_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_ctrlr_ut_SOURCES = tests/unit/initiator/ctrlr_ut.c \
	tests/unit/initiator/fake_ctrlr.c tests/unit/initiator/fake_ctrlr.h \
	tests/unit/initiator/fake_target.c tests/unit/initiator/fake_target.h
tests_unit_initiator_ctrlr_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_ctrlr_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_discovery_ut_SOURCES = tests/unit/initiator/discovery_ut.c \
	tests/unit/initiator/fake_ctrlr.c tests/unit/initiator/fake_ctrlr.h \
	tests/unit/initiator/fake_target.c tests/unit/initiator/fake_target.h
tests_unit_initiator_discovery_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_discovery_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_hostnqn_ut_SOURCES = tests/unit/initiator/hostnqn_ut.c
tests_unit_initiator_hostnqn_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_hostnqn_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_errors_ut_SOURCES = tests/unit/initiator/errors_ut.c
tests_unit_initiator_errors_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_errors_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_log_ut_SOURCES = tests/unit/initiator/log_ut.c
tests_unit_initiator_log_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_log_ut_LDADD = $(initiator_ut_libs)

# NVMe/RDMA host transport (libibverbs + librdmacm), when configure found them.
if HAVE_RDMA
libnvmeof_initiator_la_SOURCES += initiator/rdma.c common/nvme_rdma_spec.h
libnvmeof_initiator_la_CFLAGS += $(RDMA_CFLAGS)
libnvmeof_initiator_la_LIBADD = $(RDMA_LIBS)
endif

# iSCSI transport unit tests; iscsi_fake_target.[ch] plays an iSCSI target.
iscsi_ut_cflags = $(initiator_ut_cflags) $(OPENSSL_CFLAGS)
iscsi_ut_fake = tests/unit/initiator/iscsi_fake_target.c tests/unit/initiator/iscsi_fake_target.h
iscsi_initiator_ut = \
	tests/unit/initiator/scsi_encap_ut \
	tests/unit/initiator/iscsi_login_ut \
	tests/unit/initiator/iscsi_ut \
	tests/unit/initiator/iscsi_ctrlr_ut
check_PROGRAMS += $(iscsi_initiator_ut)
TESTS += $(iscsi_initiator_ut)
tests_unit_initiator_scsi_encap_ut_SOURCES = tests/unit/initiator/scsi_encap_ut.c
tests_unit_initiator_scsi_encap_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_scsi_encap_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_iscsi_login_ut_SOURCES = tests/unit/initiator/iscsi_login_ut.c $(iscsi_ut_fake)
tests_unit_initiator_iscsi_login_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_iscsi_login_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_iscsi_ut_SOURCES = tests/unit/initiator/iscsi_ut.c $(iscsi_ut_fake)
tests_unit_initiator_iscsi_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_iscsi_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_iscsi_ctrlr_ut_SOURCES = tests/unit/initiator/iscsi_ctrlr_ut.c $(iscsi_ut_fake)
tests_unit_initiator_iscsi_ctrlr_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_iscsi_ctrlr_ut_LDADD = $(initiator_ut_libs)
