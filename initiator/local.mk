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
	initiator/log.c
libnvmeof_initiator_la_CFLAGS = $(AM_CFLAGS) $(ISAL_CFLAGS)

lib_LTLIBRARIES += libnvmeof.la
libnvmeof_la_SOURCES = initiator/nvmeof.h
libnvmeof_la_LIBADD = libnvmeof_initiator.la libnvmeof_common.la $(ISAL_LIBS)
libnvmeof_la_LDFLAGS = -version-info 0:0:0 -export-symbols-regex '^nvmeof_' -no-undefined
include_HEADERS += initiator/nvmeof.h
pkgconfig_DATA += initiator/libnvmeof.pc

bin_PROGRAMS += initiator/nvmeof
initiator_nvmeof_SOURCES = initiator/cli.c
initiator_nvmeof_LDADD = libnvmeof.la

# Unit tests (CUnit), one per source file; fake_target.[ch] plays an NVMe/TCP controller.
initiator_ut_cflags = $(UT_CFLAGS) -I$(top_srcdir)/tests/unit/initiator
initiator_ut_libs = libnvmeof_initiator.la libnvmeof_common.la $(ISAL_LIBS) $(UT_LIBS)
initiator_ut = \
	tests/unit/initiator/tcp_ut \
	tests/unit/initiator/qpair_ut \
	tests/unit/initiator/io_ut
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
