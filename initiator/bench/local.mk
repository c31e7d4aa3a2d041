# initiator/bench/: nvmeof-bench: native NVMe/TCP vs SCSI over iSCSI (bench.h lists its parts).
bench_sources = initiator/bench/bench.h initiator/bench/bench_hist.h initiator/bench/bench_hist.c \
	initiator/bench/bench_stats.c initiator/bench/bench_run.c initiator/bench/bench_target.c \
	initiator/bench/bench_report.c initiator/bench/bench_svg.c initiator/bench/bench_opts.c \
	common/json_writer.c common/json_writer.h
bin_PROGRAMS += initiator/nvmeof-bench
initiator_nvmeof_bench_SOURCES = initiator/bench/bench_main.c $(bench_sources)
initiator_nvmeof_bench_CFLAGS = $(HOST_CFLAGS)
initiator_nvmeof_bench_LDADD = libnvmeof.la -lm
dist_man_MANS += man/nvmeof-bench.1

bench_ut = \
	tests/unit/initiator/bench/bench_hist_ut \
	tests/unit/initiator/bench/bench_stats_ut \
	tests/unit/initiator/bench/bench_run_ut \
	tests/unit/initiator/bench/bench_target_ut \
	tests/unit/initiator/bench/bench_report_ut \
	tests/unit/initiator/bench/bench_svg_ut \
	tests/unit/initiator/bench/bench_opts_ut
check_PROGRAMS += $(bench_ut)
TESTS += $(bench_ut)
bench_ut_libs = libnvmeof.la -lm $(UT_LIBS)
tests_unit_initiator_bench_bench_hist_ut_SOURCES = tests/unit/initiator/bench/bench_hist_ut.c \
	initiator/bench/bench_hist.c initiator/bench/bench_hist.h
tests_unit_initiator_bench_bench_hist_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_bench_hist_ut_LDADD = -lm $(UT_LIBS)
tests_unit_initiator_bench_bench_stats_ut_SOURCES = tests/unit/initiator/bench/bench_stats_ut.c $(bench_sources)
tests_unit_initiator_bench_bench_stats_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_bench_stats_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_bench_run_ut_SOURCES = tests/unit/initiator/bench/bench_run_ut.c $(bench_sources)
tests_unit_initiator_bench_bench_run_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_bench_run_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_bench_target_ut_SOURCES = tests/unit/initiator/bench/bench_target_ut.c \
	$(bench_sources)
tests_unit_initiator_bench_bench_target_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_bench_target_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_bench_report_ut_SOURCES = tests/unit/initiator/bench/bench_report_ut.c \
	$(bench_sources)
tests_unit_initiator_bench_bench_report_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_bench_report_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_bench_svg_ut_SOURCES = tests/unit/initiator/bench/bench_svg_ut.c $(bench_sources)
tests_unit_initiator_bench_bench_svg_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_initiator_bench_bench_svg_ut_LDADD = $(bench_ut_libs)
tests_unit_initiator_bench_bench_opts_ut_SOURCES = tests/unit/initiator/bench/bench_opts_ut.c $(bench_sources)
tests_unit_initiator_bench_bench_opts_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_initiator_bench_bench_opts_ut_LDADD = $(bench_ut_libs) $(JSONC_LIBS)

# nvmeof-tcp-ceiling: the loopback ceiling nvmeof-bench --ceiling compares against,
# installed beside the bench.
bin_PROGRAMS += initiator/nvmeof-tcp-ceiling
initiator_nvmeof_tcp_ceiling_SOURCES = initiator/bench/tcp_ceiling.c
initiator_nvmeof_tcp_ceiling_CFLAGS = $(HOST_CFLAGS) -O2
