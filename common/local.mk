# common/: wire formats and helpers shared by target and initiator (no libev, no sockets).
noinst_LTLIBRARIES += libnvmeof_common.la
libnvmeof_common_la_SOURCES = \
	common/endian.h \
	common/nvme_spec.h \
	common/nvme_tcp_spec.h \
	common/crc32c.c common/crc32c.h \
	common/log.c common/log.h \
	common/nvme_tcp_pdu.c common/nvme_tcp_pdu.h
libnvmeof_common_la_CFLAGS = $(AM_CFLAGS) $(ISAL_CFLAGS)
libnvmeof_common_la_LIBADD = $(ISAL_LIBS)

# Unit tests for common/ (tests/unit/common/*_ut.c) are listed below as they land.
