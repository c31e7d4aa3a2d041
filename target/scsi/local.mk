# target/scsi/: SCSI CDB -> NVMe command translation and NVMe status -> sense (pure
# functions: SBC block commands, SPC inquiry/mode/VPD, persistent reservations).
noinst_LTLIBRARIES += libnvmeof_scsi.la
libnvmeof_scsi_la_SOURCES = \
	target/scsi/scsi_xlate.h target/scsi/scsi_internal.h \
	target/scsi/scsi_xlate.c target/scsi/sbc.c target/scsi/spc.c target/scsi/spc_pr.c
libnvmeof_scsi_la_CFLAGS = $(TARGET_CFLAGS)

check_PROGRAMS += tests/unit/target/scsi/scsi_xlate_ut
TESTS += tests/unit/target/scsi/scsi_xlate_ut
tests_unit_target_scsi_scsi_xlate_ut_SOURCES = tests/unit/target/scsi/scsi_xlate_ut.c
tests_unit_target_scsi_scsi_xlate_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_scsi_scsi_xlate_ut_LDADD = libnvmeof_scsi.la libnvmeof_common.la $(UT_LIBS)
