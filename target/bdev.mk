# target/ namespace backends (ram, null, file via io_uring).
noinst_LTLIBRARIES += libnvmeof_bdev.la
libnvmeof_bdev_la_SOURCES = \
	target/bdev.h target/bdev_internal.h \
	target/bdev.c \
	target/bdev_ram.c \
	target/bdev_null.c \
	target/bdev_file.c
libnvmeof_bdev_la_CFLAGS = $(AM_CFLAGS) $(URING_CFLAGS)
libnvmeof_bdev_la_LIBADD = $(URING_LIBS)

# Unit tests.
BDEV_UT_LIBS = libnvmeof_bdev.la libnvmeof_reactor.la libnvmeof_common.la \
	$(URING_LIBS) $(EV_LIBS) $(UT_LIBS)
check_PROGRAMS += tests/unit/target/bdev_ut tests/unit/target/bdev_ram_ut \
	tests/unit/target/bdev_null_ut tests/unit/target/bdev_file_ut
TESTS += tests/unit/target/bdev_ut tests/unit/target/bdev_ram_ut \
	tests/unit/target/bdev_null_ut tests/unit/target/bdev_file_ut
tests_unit_target_bdev_ut_SOURCES = tests/unit/target/bdev_ut.c
tests_unit_target_bdev_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_ram_ut_SOURCES = tests/unit/target/bdev_ram_ut.c
tests_unit_target_bdev_ram_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_ram_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_null_ut_SOURCES = tests/unit/target/bdev_null_ut.c
tests_unit_target_bdev_null_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_null_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_file_ut_SOURCES = tests/unit/target/bdev_file_ut.c
tests_unit_target_bdev_file_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_file_ut_LDADD = $(BDEV_UT_LIBS)
