# initiator/lib/: libnvmeof (public API in nvmeof.h): NVMe/TCP, NVMe/RDMA and iSCSI host
# transports behind one queue-pair interface, in rooms that call only downwards:
#   queue/  the queue layer both paths share: queue pairs, requests, memory, stats,
#           logging, the transport ops (host_transport.h)
#   nvme/   NVMe/TCP (with TLS), NVMe/RDMA, Fabrics commands, DH-HMAC-CHAP
#   scsi/   the iSCSI tunnel: session, login, tasks, NVMe <-> SCSI encapsulation
#   ./      the controller on top of both (bring-up, reconnect, discovery) and nvmeof.h
# nvme/ and scsi/ never call each other; tests/layering.sh and tests/callgraph.sh check it.
#
# libnvmeof_initiator.la holds the library's objects so that unit tests can reach
# internal symbols; the installed libnvmeof.la wraps it with the common code and
# exports only the nvmeof_* API.
LIBNVMEOF_CFLAGS = $(HOST_CFLAGS) -I$(top_srcdir)/initiator/lib
noinst_LTLIBRARIES += libnvmeof_initiator.la
libnvmeof_initiator_la_SOURCES = \
	initiator/lib/nvmeof.h \
	initiator/lib/queue/host_internal.h \
	initiator/lib/queue/host_transport.h \
	initiator/lib/queue/host_qpair.c \
	initiator/lib/queue/host_qpair_stats.c \
	initiator/lib/queue/host_io.c \
	initiator/lib/queue/host_opts.c \
	initiator/lib/queue/host_nqn.c \
	initiator/lib/queue/host_errors.c \
	initiator/lib/queue/host_log.c \
	initiator/lib/queue/host_dial.c \
	initiator/lib/queue/host_mem.c initiator/lib/queue/host_mem.h \
	initiator/lib/nvme/host_nvme.h \
	initiator/lib/nvme/host_fabrics.c \
	initiator/lib/nvme/host_auth.c initiator/lib/nvme/host_auth.h \
	initiator/lib/nvme/host_tcp.c \
	initiator/lib/nvme/host_sock.h initiator/lib/nvme/host_tls.c \
	initiator/lib/nvme/host_rdma_sgl.c initiator/lib/nvme/host_rdma_sgl.h \
	initiator/lib/scsi/host_iscsi.c initiator/lib/scsi/host_iscsi.h \
	initiator/lib/scsi/host_iscsi_task.c \
	initiator/lib/scsi/host_iscsi_send.c \
	initiator/lib/scsi/host_iscsi_recv.c \
	initiator/lib/scsi/host_iscsi_session.c \
	initiator/lib/scsi/host_iscsi_login.c \
	initiator/lib/scsi/host_iscsi_ctrlr.c \
	initiator/lib/scsi/host_iscsi_discovery.c \
	initiator/lib/scsi/host_scsi_encap.c initiator/lib/scsi/host_scsi_encap.h \
	initiator/lib/host_ctrlr.h \
	initiator/lib/host_ctrlr.c \
	initiator/lib/host_reconnect.c \
	initiator/lib/host_discovery.c
libnvmeof_initiator_la_CFLAGS = $(LIBNVMEOF_CFLAGS) $(ISAL_CFLAGS) $(OPENSSL_CFLAGS)

lib_LTLIBRARIES += libnvmeof.la
libnvmeof_la_SOURCES = initiator/lib/nvmeof.h
libnvmeof_la_LIBADD = libnvmeof_initiator.la libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS)
libnvmeof_la_LDFLAGS = -version-info 0:0:0 -export-symbols-regex '^nvmeof_' -no-undefined
include_HEADERS += initiator/lib/nvmeof.h
pkgconfig_DATA += initiator/lib/libnvmeof.pc

EXTRA_DIST += initiator/lib/README.md

# Unit tests (CUnit), one per source file; fake_target.[ch] plays an NVMe/TCP controller.
initiator_ut_cflags = $(UT_CFLAGS) -I$(top_srcdir)/initiator/lib -I$(top_srcdir)/tests/unit/initiator/lib
initiator_ut_libs = libnvmeof_initiator.la libnvmeof_common.la $(ISAL_LIBS) $(OPENSSL_LIBS) \
	$(UT_LIBS)
initiator_ut = \
	tests/unit/initiator/lib/host_tcp_ut \
	tests/unit/initiator/lib/host_qpair_ut \
	tests/unit/initiator/lib/host_io_ut \
	tests/unit/initiator/lib/host_ctrlr_ut \
	tests/unit/initiator/lib/host_discovery_ut \
	tests/unit/initiator/lib/host_nqn_ut \
	tests/unit/initiator/lib/host_errors_ut \
	tests/unit/initiator/lib/host_log_ut
check_PROGRAMS += $(initiator_ut)
TESTS += $(initiator_ut)
tests_unit_initiator_lib_host_tcp_ut_SOURCES = tests/unit/initiator/lib/host_tcp_ut.c \
	tests/unit/initiator/lib/fake_target.c tests/unit/initiator/lib/fake_target.h
tests_unit_initiator_lib_host_tcp_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_tcp_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_qpair_ut_SOURCES = tests/unit/initiator/lib/host_qpair_ut.c \
	tests/unit/initiator/lib/fake_transport.c tests/unit/initiator/lib/fake_transport.h
tests_unit_initiator_lib_host_qpair_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_qpair_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_io_ut_SOURCES = tests/unit/initiator/lib/host_io_ut.c \
	tests/unit/initiator/lib/fake_transport.c tests/unit/initiator/lib/fake_transport.h
tests_unit_initiator_lib_host_io_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_io_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_ctrlr_ut_SOURCES = tests/unit/initiator/lib/host_ctrlr_ut.c \
	tests/unit/initiator/lib/fake_ctrlr.c tests/unit/initiator/lib/fake_ctrlr.h \
	tests/unit/initiator/lib/fake_target.c tests/unit/initiator/lib/fake_target.h
tests_unit_initiator_lib_host_ctrlr_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_ctrlr_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_discovery_ut_SOURCES = tests/unit/initiator/lib/host_discovery_ut.c \
	tests/unit/initiator/lib/fake_ctrlr.c tests/unit/initiator/lib/fake_ctrlr.h \
	tests/unit/initiator/lib/fake_target.c tests/unit/initiator/lib/fake_target.h
tests_unit_initiator_lib_host_discovery_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_discovery_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_nqn_ut_SOURCES = tests/unit/initiator/lib/host_nqn_ut.c
tests_unit_initiator_lib_host_nqn_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_nqn_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_errors_ut_SOURCES = tests/unit/initiator/lib/host_errors_ut.c
tests_unit_initiator_lib_host_errors_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_errors_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_log_ut_SOURCES = tests/unit/initiator/lib/host_log_ut.c
tests_unit_initiator_lib_host_log_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_log_ut_LDADD = $(initiator_ut_libs)

# NVMe/RDMA host transport (libibverbs + librdmacm), when configure found them.
if HAVE_RDMA
libnvmeof_initiator_la_SOURCES += initiator/lib/nvme/host_rdma.c common/nvme_rdma_spec.h
libnvmeof_initiator_la_CFLAGS += $(RDMA_CFLAGS)
libnvmeof_initiator_la_LIBADD = $(RDMA_LIBS)
endif

# iSCSI transport unit tests; iscsi_fake_target.[ch] plays an iSCSI target.
iscsi_ut_cflags = $(initiator_ut_cflags) $(OPENSSL_CFLAGS)
iscsi_ut_fake = tests/unit/initiator/lib/iscsi_fake_target.c tests/unit/initiator/lib/iscsi_fake_target.h
iscsi_initiator_ut = \
	tests/unit/initiator/lib/host_scsi_encap_ut \
	tests/unit/initiator/lib/host_iscsi_login_ut \
	tests/unit/initiator/lib/host_iscsi_ut \
	tests/unit/initiator/lib/host_iscsi_ctrlr_ut
check_PROGRAMS += $(iscsi_initiator_ut)
TESTS += $(iscsi_initiator_ut)
tests_unit_initiator_lib_host_scsi_encap_ut_SOURCES = tests/unit/initiator/lib/host_scsi_encap_ut.c
tests_unit_initiator_lib_host_scsi_encap_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_lib_host_scsi_encap_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_iscsi_login_ut_SOURCES = tests/unit/initiator/lib/host_iscsi_login_ut.c $(iscsi_ut_fake)
tests_unit_initiator_lib_host_iscsi_login_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_lib_host_iscsi_login_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_iscsi_ut_SOURCES = tests/unit/initiator/lib/host_iscsi_ut.c $(iscsi_ut_fake)
tests_unit_initiator_lib_host_iscsi_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_lib_host_iscsi_ut_LDADD = $(initiator_ut_libs)
check_PROGRAMS += tests/unit/initiator/lib/host_iscsi_discovery_ut
TESTS += tests/unit/initiator/lib/host_iscsi_discovery_ut
tests_unit_initiator_lib_host_iscsi_discovery_ut_SOURCES = tests/unit/initiator/lib/host_iscsi_discovery_ut.c
tests_unit_initiator_lib_host_iscsi_discovery_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_lib_host_iscsi_discovery_ut_LDADD = $(initiator_ut_libs)
tests_unit_initiator_lib_host_iscsi_ctrlr_ut_SOURCES = tests/unit/initiator/lib/host_iscsi_ctrlr_ut.c $(iscsi_ut_fake)
tests_unit_initiator_lib_host_iscsi_ctrlr_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_lib_host_iscsi_ctrlr_ut_LDADD = $(initiator_ut_libs)


# Reconnect (host_reconnect.c, host_qpair.c requeue) against both fakes.
check_PROGRAMS += tests/unit/initiator/lib/host_reconnect_ut
TESTS += tests/unit/initiator/lib/host_reconnect_ut
tests_unit_initiator_lib_host_reconnect_ut_SOURCES = tests/unit/initiator/lib/host_reconnect_ut.c \
	tests/unit/initiator/lib/fake_ctrlr.c tests/unit/initiator/lib/fake_ctrlr.h \
	tests/unit/initiator/lib/fake_target.c tests/unit/initiator/lib/fake_target.h $(iscsi_ut_fake)
tests_unit_initiator_lib_host_reconnect_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_lib_host_reconnect_ut_LDADD = $(initiator_ut_libs)

# DH-HMAC-CHAP (nvme/host_auth.c): message by message against fake_auth.[ch], and over
# NVMe/TCP with fake_ctrlr playing the controller's side on every connection.
check_PROGRAMS += tests/unit/initiator/lib/host_auth_ut
TESTS += tests/unit/initiator/lib/host_auth_ut
tests_unit_initiator_lib_host_auth_ut_SOURCES = tests/unit/initiator/lib/host_auth_ut.c \
	tests/unit/initiator/lib/fake_auth.c tests/unit/initiator/lib/fake_auth.h \
	tests/unit/initiator/lib/fake_ctrlr.c tests/unit/initiator/lib/fake_ctrlr.h \
	tests/unit/initiator/lib/fake_target.c tests/unit/initiator/lib/fake_target.h
tests_unit_initiator_lib_host_auth_ut_CFLAGS = $(iscsi_ut_cflags)
tests_unit_initiator_lib_host_auth_ut_LDADD = $(initiator_ut_libs)

# Keyed descriptors of zero-copy NVMe/RDMA commands, read back by the target's parser.
check_PROGRAMS += tests/unit/initiator/lib/host_rdma_sgl_ut
TESTS += tests/unit/initiator/lib/host_rdma_sgl_ut
tests_unit_initiator_lib_host_rdma_sgl_ut_SOURCES = tests/unit/initiator/lib/host_rdma_sgl_ut.c \
	target/rdma/rdma_proto.c
tests_unit_initiator_lib_host_rdma_sgl_ut_CFLAGS = $(initiator_ut_cflags)
tests_unit_initiator_lib_host_rdma_sgl_ut_LDADD = $(initiator_ut_libs)
