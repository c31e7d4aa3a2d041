# target/ core: subsystems, controllers, fabrics/admin/NVM command handlers, discovery.
noinst_LTLIBRARIES += libnvmeof_core.la
libnvmeof_core_la_SOURCES = \
	target/nvmf.h target/transport.h \
	target/ctrlr.c target/ctrlr.h \
	target/fabrics.c \
	target/admin.c \
	target/log_page.c \
	target/features.c \
	target/io.c \
	target/discovery.c \
	target/subsystem.c \
	target/port.c
libnvmeof_core_la_CFLAGS = $(AM_CFLAGS) $(EV_CFLAGS) $(OPENSSL_CFLAGS)
libnvmeof_core_la_LIBADD = $(OPENSSL_LIBS)

# Unit tests: each links the core with the fakes in tests/unit/target/fakes.c (transport,
# reactors, bdev) instead of the real transport, reactors and backends.
CORE_UT_SOURCES = tests/unit/target/fakes.c tests/unit/target/fakes.h
CORE_UT_CFLAGS = $(UT_CFLAGS) $(OPENSSL_CFLAGS)
CORE_UT_LIBS = libnvmeof_core.la libnvmeof_common.la $(OPENSSL_LIBS) $(EV_LIBS) $(UT_LIBS)
CORE_UTS = tests/unit/target/ctrlr_ut tests/unit/target/fabrics_ut \
	tests/unit/target/admin_ut tests/unit/target/log_page_ut \
	tests/unit/target/features_ut tests/unit/target/io_ut \
	tests/unit/target/discovery_ut tests/unit/target/subsystem_ut
check_PROGRAMS += $(CORE_UTS)
TESTS += $(CORE_UTS)
tests_unit_target_fabrics_ut_SOURCES = tests/unit/target/fabrics_ut.c $(CORE_UT_SOURCES)
tests_unit_target_fabrics_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_fabrics_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_io_ut_SOURCES = tests/unit/target/io_ut.c $(CORE_UT_SOURCES)
tests_unit_target_io_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_io_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_admin_ut_SOURCES = tests/unit/target/admin_ut.c $(CORE_UT_SOURCES)
tests_unit_target_admin_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_admin_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_log_page_ut_SOURCES = tests/unit/target/log_page_ut.c $(CORE_UT_SOURCES)
tests_unit_target_log_page_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_log_page_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_features_ut_SOURCES = tests/unit/target/features_ut.c $(CORE_UT_SOURCES)
tests_unit_target_features_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_features_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_discovery_ut_SOURCES = tests/unit/target/discovery_ut.c $(CORE_UT_SOURCES)
tests_unit_target_discovery_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_discovery_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_subsystem_ut_SOURCES = tests/unit/target/subsystem_ut.c $(CORE_UT_SOURCES)
tests_unit_target_subsystem_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_subsystem_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_ctrlr_ut_SOURCES = tests/unit/target/ctrlr_ut.c $(CORE_UT_SOURCES)
tests_unit_target_ctrlr_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_ctrlr_ut_LDADD = $(CORE_UT_LIBS)
