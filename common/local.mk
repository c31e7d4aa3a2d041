# common/: wire formats and helpers shared by target and initiator (no libev, no sockets).
noinst_LTLIBRARIES += libnvmeof_common.la
libnvmeof_common_la_SOURCES = \
	common/endian.h \
	common/nvme_spec.h \
	common/nvme_tcp_spec.h \
	common/crc32c.c common/crc32c.h \
	common/log.c common/log.h \
	common/nvme_tcp_pdu.c common/nvme_tcp_pdu.h \
	common/uri.c common/uri.h
libnvmeof_common_la_CFLAGS = $(AM_CFLAGS) $(ISAL_CFLAGS)
libnvmeof_common_la_LIBADD = $(ISAL_LIBS)

# Unit tests for common/ (tests/unit/common/*_ut.c).
check_PROGRAMS += tests/unit/common/uri_ut
TESTS += tests/unit/common/uri_ut
tests_unit_common_uri_ut_SOURCES = tests/unit/common/uri_ut.c
tests_unit_common_uri_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_uri_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

check_PROGRAMS += tests/unit/common/nvme_tcp_pdu_ut
TESTS += tests/unit/common/nvme_tcp_pdu_ut
tests_unit_common_nvme_tcp_pdu_ut_SOURCES = tests/unit/common/nvme_tcp_pdu_ut.c
tests_unit_common_nvme_tcp_pdu_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_nvme_tcp_pdu_ut_LDADD = libnvmeof_common.la $(ISAL_LIBS) $(UT_LIBS)

# iSCSI and SCSI wire formats and the iSCSI PDU codec (both sides).
libnvmeof_common_la_SOURCES += \
	common/scsi_spec.h \
	common/iscsi_spec.h \
	common/iscsi_pdu.c common/iscsi_pdu.h

check_PROGRAMS += tests/unit/common/iscsi_pdu_ut
TESTS += tests/unit/common/iscsi_pdu_ut
tests_unit_common_iscsi_pdu_ut_SOURCES = tests/unit/common/iscsi_pdu_ut.c
tests_unit_common_iscsi_pdu_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_iscsi_pdu_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

# JSON output helpers (escaping per RFC 8259), for the CLI, the bench and the daemon.
libnvmeof_common_la_SOURCES += common/json_writer.c common/json_writer.h
check_PROGRAMS += tests/unit/common/json_writer_ut
TESTS += tests/unit/common/json_writer_ut
tests_unit_common_json_writer_ut_SOURCES = tests/unit/common/json_writer_ut.c
tests_unit_common_json_writer_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_json_writer_ut_LDADD = libnvmeof_common.la -lm $(UT_LIBS)
