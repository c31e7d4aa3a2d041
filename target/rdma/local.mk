# target/rdma/: the NVMe/RDMA transport (libibverbs + librdmacm), built when configure found them
# (--disable-rdma leaves it out); its verbs-free binding rules are unit-tested either way.
if HAVE_RDMA
noinst_LTLIBRARIES += libnvmeof_rdma.la
libnvmeof_rdma_la_SOURCES = \
	common/nvme_rdma_spec.h \
	target/rdma/rdma_transport.h target/rdma/rdma_internal.h \
	target/rdma/rdma_proto.c target/rdma/rdma_proto.h \
	target/rdma/rdma_transport.c target/rdma/rdma_qpair.c target/rdma/rdma_pool.c
libnvmeof_rdma_la_CFLAGS = $(TARGET_CFLAGS) $(RDMA_CFLAGS)
libnvmeof_rdma_la_LIBADD = $(RDMA_LIBS)
endif

# Unit tests: CM private data codec and keyed SGL helpers (common/nvme_rdma_spec.h), and
# the target's CM request checks and SGL classification (target/rdma/rdma_proto.c).
check_PROGRAMS += tests/unit/common/nvme_rdma_spec_ut tests/unit/target/rdma/rdma_proto_ut
TESTS += tests/unit/common/nvme_rdma_spec_ut tests/unit/target/rdma/rdma_proto_ut
tests_unit_common_nvme_rdma_spec_ut_SOURCES = tests/unit/common/nvme_rdma_spec_ut.c
tests_unit_common_nvme_rdma_spec_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_common_nvme_rdma_spec_ut_LDADD = $(UT_LIBS)
tests_unit_target_rdma_rdma_proto_ut_SOURCES = tests/unit/target/rdma/rdma_proto_ut.c target/rdma/rdma_proto.c
tests_unit_target_rdma_rdma_proto_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_rdma_rdma_proto_ut_LDADD = $(UT_LIBS)
