# target/iscsi/: the iSCSI transport (RFC 7143, ERL 0): portals, connections and their PDU
# machine, login and CHAP, sessions, tasks, task management. CDBs go to target/scsi/.
noinst_LTLIBRARIES += libnvmeof_iscsi.la
libnvmeof_iscsi_la_SOURCES = \
	target/iscsi/iscsi.h target/iscsi/iscsi_internal.h \
	target/iscsi/iscsi_target.c target/iscsi/iscsi_conf.c \
	target/iscsi/iscsi_conn.c target/iscsi/iscsi_login.c target/iscsi/iscsi_chap.c \
	target/iscsi/iscsi_session.c target/iscsi/iscsi_task.c target/iscsi/iscsi_tmf.c \
	target/iscsi/iscsi_datain.c target/iscsi/iscsi_datain_pdu.c \
	target/iscsi/iscsi_mgmt.c target/iscsi/iscsi_watch.c target/iscsi/iscsi_limits.c \
	target/iscsi/iscsi_task_pool.c
libnvmeof_iscsi_la_CFLAGS = $(TARGET_CFLAGS) $(EV_CFLAGS) $(OPENSSL_CFLAGS) $(JSONC_CFLAGS)
libnvmeof_iscsi_la_LIBADD = $(OPENSSL_LIBS) $(JSONC_LIBS)

check_PROGRAMS += tests/unit/target/iscsi/iscsi_chap_ut
TESTS += tests/unit/target/iscsi/iscsi_chap_ut
tests_unit_target_iscsi_iscsi_chap_ut_SOURCES = tests/unit/target/iscsi/iscsi_chap_ut.c \
	target/iscsi/iscsi_chap.c
tests_unit_target_iscsi_iscsi_chap_ut_CFLAGS = $(UT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_target_iscsi_iscsi_chap_ut_LDADD = libnvmeof_common.la $(OPENSSL_LIBS) $(UT_LIBS)

check_PROGRAMS += tests/unit/target/iscsi/iscsi_datain_ut
TESTS += tests/unit/target/iscsi/iscsi_datain_ut
tests_unit_target_iscsi_iscsi_datain_ut_SOURCES = tests/unit/target/iscsi/iscsi_datain_ut.c \
	target/iscsi/iscsi_datain_pdu.c
tests_unit_target_iscsi_iscsi_datain_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_iscsi_iscsi_datain_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

check_PROGRAMS += tests/unit/target/iscsi/iscsi_limits_ut
TESTS += tests/unit/target/iscsi/iscsi_limits_ut
tests_unit_target_iscsi_iscsi_limits_ut_SOURCES = tests/unit/target/iscsi/iscsi_limits_ut.c \
	target/iscsi/iscsi_limits.c
tests_unit_target_iscsi_iscsi_limits_ut_CFLAGS = $(UT_CFLAGS) $(EV_CFLAGS)
tests_unit_target_iscsi_iscsi_limits_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

check_PROGRAMS += tests/unit/target/iscsi/iscsi_task_pool_ut
TESTS += tests/unit/target/iscsi/iscsi_task_pool_ut
tests_unit_target_iscsi_iscsi_task_pool_ut_SOURCES = tests/unit/target/iscsi/iscsi_task_pool_ut.c \
	target/iscsi/iscsi_task_pool.c
tests_unit_target_iscsi_iscsi_task_pool_ut_CFLAGS = $(UT_CFLAGS) $(EV_CFLAGS)
tests_unit_target_iscsi_iscsi_task_pool_ut_LDADD = libnvmeof_common.la $(UT_LIBS)
