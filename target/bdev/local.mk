# target/bdev/: namespace backends behind one ops table: ram, null, file (files and
# block devices through io_uring) and rbd (Ceph RBD images through librbd; the library
# table is built only when configure finds librbd, the request mapping always).
noinst_LTLIBRARIES += libnvmeof_bdev.la
libnvmeof_bdev_la_SOURCES = \
	target/bdev/bdev.h target/bdev/bdev_internal.h \
	target/bdev/bdev.c \
	target/bdev/bdev_ram.c \
	target/bdev/bdev_null.c \
	target/bdev/bdev_file.c target/bdev/bdev_dio.c target/bdev/bdev_nvme.c \
	target/bdev/bdev_rbd_internal.h target/bdev/bdev_rbd.c \
	target/bdev/resv_store_rados_internal.h target/bdev/resv_store_rados.c \
	target/bdev/bdev_lba_query.c
if HAVE_RBD
libnvmeof_bdev_la_SOURCES += target/bdev/bdev_rbd_librbd.c target/bdev/resv_store_rados_lib.c
endif
libnvmeof_bdev_la_CFLAGS = $(TARGET_CFLAGS) $(URING_CFLAGS)
libnvmeof_bdev_la_LIBADD = $(URING_LIBS) $(RBD_LIBS)

# Unit tests. The backends need nothing of the core: the rbd reservation store reports a
# change through the hook the core sets on it (resv_store_rados_ut sets its own).
BDEV_UT_LIBS = libnvmeof_bdev.la libnvmeof_reactor.la libnvmeof_common.la \
	$(URING_LIBS) $(RBD_LIBS) $(EV_LIBS) $(UT_LIBS)
check_PROGRAMS += tests/unit/target/bdev/bdev_ut tests/unit/target/bdev/bdev_ram_ut \
	tests/unit/target/bdev/bdev_null_ut tests/unit/target/bdev/bdev_file_ut \
	tests/unit/target/bdev/bdev_rbd_ut tests/unit/target/bdev/resv_store_rados_ut
TESTS += tests/unit/target/bdev/bdev_ut tests/unit/target/bdev/bdev_ram_ut \
	tests/unit/target/bdev/bdev_null_ut tests/unit/target/bdev/bdev_file_ut \
	tests/unit/target/bdev/bdev_rbd_ut tests/unit/target/bdev/resv_store_rados_ut
tests_unit_target_bdev_bdev_ut_SOURCES = tests/unit/target/bdev/bdev_ut.c
tests_unit_target_bdev_bdev_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_bdev_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_bdev_ram_ut_SOURCES = tests/unit/target/bdev/bdev_ram_ut.c
tests_unit_target_bdev_bdev_ram_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_bdev_ram_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_bdev_null_ut_SOURCES = tests/unit/target/bdev/bdev_null_ut.c
tests_unit_target_bdev_bdev_null_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_bdev_null_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_bdev_file_ut_SOURCES = tests/unit/target/bdev/bdev_file_ut.c
tests_unit_target_bdev_bdev_file_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_bdev_file_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_bdev_rbd_ut_SOURCES = tests/unit/target/bdev/bdev_rbd_ut.c
tests_unit_target_bdev_bdev_rbd_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_bdev_rbd_ut_LDADD = $(BDEV_UT_LIBS)
tests_unit_target_bdev_resv_store_rados_ut_SOURCES = \
	tests/unit/target/bdev/resv_store_rados_ut.c
tests_unit_target_bdev_resv_store_rados_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_resv_store_rados_ut_LDADD = $(BDEV_UT_LIBS)

# NVMe passthrough: commands built from bdev ops, status mapping, Identify parsing.
check_PROGRAMS += tests/unit/target/bdev/bdev_nvme_ut
TESTS += tests/unit/target/bdev/bdev_nvme_ut
tests_unit_target_bdev_bdev_nvme_ut_SOURCES = tests/unit/target/bdev/bdev_nvme_ut.c $(BDEV_UT_FAKES)
tests_unit_target_bdev_bdev_nvme_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_bdev_bdev_nvme_ut_LDADD = $(BDEV_UT_LIBS)
