# common/: wire formats and helpers shared by target and initiator (no libev, no sockets).
noinst_LTLIBRARIES += libnvmeof_common.la
libnvmeof_common_la_SOURCES = \
	common/endian.h \
	common/nvme_spec.h \
	common/nvme_tcp_spec.h \
	common/crc32c.c common/crc32c.h \
	common/iov.c common/iov.h \
	common/log.c common/log.h \
	common/hist.c common/hist.h \
	common/nvme_tcp_pdu.c common/nvme_tcp_pdu.h \
	common/uri.c common/uri.h \
	common/hex.h
libnvmeof_common_la_CFLAGS = $(AM_CFLAGS) $(ISAL_CFLAGS)
libnvmeof_common_la_LIBADD = $(ISAL_LIBS)

# Unit tests for common/ (tests/unit/common/*_ut.c).
check_PROGRAMS += tests/unit/common/iov_ut
TESTS += tests/unit/common/iov_ut
tests_unit_common_iov_ut_SOURCES = tests/unit/common/iov_ut.c
tests_unit_common_iov_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_iov_ut_LDADD = libnvmeof_common.la $(UT_LIBS)

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

# In-band authentication (DH-HMAC-CHAP) and NVMe/TCP TLS PSKs: wire formats, key formats and
# their cryptography on OpenSSL 3 (EVP_MAC, EVP_KDF, EVP_PKEY DH).
libnvmeof_common_la_SOURCES += \
	common/nvme_auth_spec.h \
	common/base64.c common/base64.h \
	common/secret.c common/secret.h \
	common/dhchap_crypto.c common/dhchap_crypto.h \
	common/dhchap_key.c common/dhchap_key.h \
	common/tls_psk.c common/tls_psk.h \
	common/tls_stream.c common/tls_stream.h \
	common/key_file.c common/key_file.h
libnvmeof_common_la_CFLAGS += $(OPENSSL_CFLAGS)
libnvmeof_common_la_LIBADD += $(OPENSSL_LIBS)

auth_ut_cflags = $(UT_CFLAGS) $(OPENSSL_CFLAGS)
auth_ut_libs = libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS) $(UT_LIBS)

check_PROGRAMS += tests/unit/common/nvme_auth_spec_ut
TESTS += tests/unit/common/nvme_auth_spec_ut
tests_unit_common_nvme_auth_spec_ut_SOURCES = tests/unit/common/nvme_auth_spec_ut.c
tests_unit_common_nvme_auth_spec_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_nvme_auth_spec_ut_LDADD = $(auth_ut_libs)

check_PROGRAMS += tests/unit/common/base64_ut
TESTS += tests/unit/common/base64_ut
tests_unit_common_base64_ut_SOURCES = tests/unit/common/base64_ut.c
tests_unit_common_base64_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_base64_ut_LDADD = $(auth_ut_libs)

check_PROGRAMS += tests/unit/common/secret_ut
TESTS += tests/unit/common/secret_ut
tests_unit_common_secret_ut_SOURCES = tests/unit/common/secret_ut.c
tests_unit_common_secret_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_secret_ut_LDADD = $(auth_ut_libs)

check_PROGRAMS += tests/unit/common/key_file_ut
TESTS += tests/unit/common/key_file_ut
tests_unit_common_key_file_ut_SOURCES = tests/unit/common/key_file_ut.c
tests_unit_common_key_file_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_key_file_ut_LDADD = $(auth_ut_libs)

check_PROGRAMS += tests/unit/common/dhchap_crypto_ut
TESTS += tests/unit/common/dhchap_crypto_ut
tests_unit_common_dhchap_crypto_ut_SOURCES = tests/unit/common/dhchap_crypto_ut.c \
	tests/unit/common/ut_hex.h
tests_unit_common_dhchap_crypto_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_dhchap_crypto_ut_LDADD = $(auth_ut_libs)

check_PROGRAMS += tests/unit/common/dhchap_key_ut
TESTS += tests/unit/common/dhchap_key_ut
tests_unit_common_dhchap_key_ut_SOURCES = tests/unit/common/dhchap_key_ut.c
tests_unit_common_dhchap_key_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_dhchap_key_ut_LDADD = $(auth_ut_libs)

check_PROGRAMS += tests/unit/common/tls_psk_ut
TESTS += tests/unit/common/tls_psk_ut
tests_unit_common_tls_psk_ut_SOURCES = tests/unit/common/tls_psk_ut.c \
	tests/unit/common/ut_hex.h
tests_unit_common_tls_psk_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_tls_psk_ut_LDADD = $(auth_ut_libs)

# JSON output helpers (escaping per RFC 8259), for the CLI, the bench and the daemon.
libnvmeof_common_la_SOURCES += common/json_writer.c common/json_writer.h
check_PROGRAMS += tests/unit/common/json_writer_ut
TESTS += tests/unit/common/json_writer_ut
tests_unit_common_json_writer_ut_SOURCES = tests/unit/common/json_writer_ut.c
tests_unit_common_json_writer_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_json_writer_ut_LDADD = libnvmeof_common.la -lm $(UT_LIBS)

# The TLS 1.3 stream between two in-memory endpoints.
check_PROGRAMS += tests/unit/common/tls_stream_ut
TESTS += tests/unit/common/tls_stream_ut
tests_unit_common_tls_stream_ut_SOURCES = tests/unit/common/tls_stream_ut.c
tests_unit_common_tls_stream_ut_CFLAGS = $(auth_ut_cflags)
tests_unit_common_tls_stream_ut_LDADD = $(auth_ut_libs)
