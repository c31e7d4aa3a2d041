# iSCSI target: PDU codecs (common/), SCSI -> NVMe translation, portal, sessions, login,
# and the NVMe-side commands SCSI needs (reservations, fused Compare and Write, LBA status).
libnvmeof_common_la_SOURCES += \
	common/scsi_spec.h \
	common/iscsi_spec.h \
	common/iscsi_pdu.c common/iscsi_pdu.h

# NVMe commands SCSI needs, executed by the core like any other NVM command.
libnvmeof_core_la_SOURCES += \
	target/reservation.c target/reservation.h \
	target/fused.c target/fused.h \
	target/lba_status.c target/lba_status.h

noinst_LTLIBRARIES += libnvmeof_iscsi.la
libnvmeof_iscsi_la_SOURCES = \
	target/scsi_xlate.c target/scsi_xlate.h target/scsi_xlate_int.h \
	target/scsi_xlate_spc.c target/scsi_xlate_pr.c \
	target/iscsi.h target/iscsi_internal.h \
	target/iscsi_target.c target/iscsi_conf.c \
	target/iscsi_conn.c target/iscsi_login.c target/iscsi_chap.c \
	target/iscsi_session.c target/iscsi_task.c target/iscsi_tmf.c
libnvmeof_iscsi_la_CFLAGS = $(AM_CFLAGS) $(EV_CFLAGS) $(OPENSSL_CFLAGS) $(JSONC_CFLAGS) \
	-I$(top_srcdir)/target
libnvmeof_iscsi_la_LIBADD = $(OPENSSL_LIBS) $(JSONC_LIBS)

check_PROGRAMS += tests/unit/common/iscsi_pdu_ut
TESTS += tests/unit/common/iscsi_pdu_ut
tests_unit_common_iscsi_pdu_ut_SOURCES = tests/unit/common/iscsi_pdu_ut.c
tests_unit_common_iscsi_pdu_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_iscsi_pdu_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

# The translator alone (pure functions).
check_PROGRAMS += tests/unit/target/scsi_xlate_ut
TESTS += tests/unit/target/scsi_xlate_ut
tests_unit_target_scsi_xlate_ut_SOURCES = tests/unit/target/scsi_xlate_ut.c \
	target/scsi_xlate.c target/scsi_xlate_spc.c target/scsi_xlate_pr.c
tests_unit_target_scsi_xlate_ut_CFLAGS = $(UT_CFLAGS) -I$(top_srcdir)/target
tests_unit_target_scsi_xlate_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

# libiscsi's compliance suite against the daemon (skipped without iscsi-test-cu).
TESTS += tests/integration/iscsi-compliance.sh
dist_check_SCRIPTS += tests/integration/iscsi-compliance.sh

# The NVMe-side commands through the executor, with the core's fakes.
check_PROGRAMS += tests/unit/target/reservation_ut
TESTS += tests/unit/target/reservation_ut
tests_unit_target_reservation_ut_SOURCES = tests/unit/target/reservation_ut.c $(CORE_UT_SOURCES)
tests_unit_target_reservation_ut_CFLAGS = $(CORE_UT_CFLAGS) -I$(top_srcdir)/tests/unit/target
tests_unit_target_reservation_ut_LDADD = $(CORE_UT_LIBS)

check_PROGRAMS += tests/unit/target/iscsi_chap_ut
TESTS += tests/unit/target/iscsi_chap_ut
tests_unit_target_iscsi_chap_ut_SOURCES = tests/unit/target/iscsi_chap_ut.c target/iscsi_chap.c
tests_unit_target_iscsi_chap_ut_CFLAGS = $(UT_CFLAGS) $(OPENSSL_CFLAGS) -I$(top_srcdir)/target
tests_unit_target_iscsi_chap_ut_LDADD = libnvmeof_common.la $(OPENSSL_LIBS) $(UT_LIBS)
