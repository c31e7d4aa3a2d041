# tests/interop/: the Linux kernel host in the qemu lab against nvmeof-target (lib.sh).
# They skip (exit 77) where the lab cannot run, except under CI=true, and take a lock so
# only one lab guest runs at a time. The lab itself is tests/interop/lab; lab-selftest.sh
# checks it in one boot.
interop_tests = \
	tests/interop/lab-selftest.sh \
	tests/interop/kernel-host-tcp.sh \
	tests/interop/kernel-host-digest.sh \
	tests/interop/initiator-nvmet.sh \
	tests/interop/ana-multipath.sh \
	tests/interop/ctl-kernel-host.sh
TESTS += $(interop_tests)
dist_check_SCRIPTS += $(interop_tests)
EXTRA_DIST += tests/interop/lib.sh tests/interop/guest-kernel-host.sh \
	tests/interop/guest-ana-multipath.sh tests/interop/guest-ctl-kernel-host.sh \
	tests/interop/guest-nvmet-target.sh tests/interop/guest-lab-selftest.sh
# the lab harness: build-guest.sh and run-in-guest.sh are run from the source tree
EXTRA_DIST += tests/interop/lab/README.md tests/interop/lab/build-guest.sh \
	tests/interop/lab/run-in-guest.sh tests/interop/lab/guest-init.sh \
	tests/interop/lab/guest-run.sh
# DH-HMAC-CHAP: the nvmeof CLI against the kernel's nvmet configured through configfs
# (hosts/<hostnqn>/dhchap_*), in the backports 6.12 guest.
TESTS += tests/interop/auth-initiator-nvmet.sh
dist_check_SCRIPTS += tests/interop/auth-initiator-nvmet.sh
EXTRA_DIST += tests/interop/guest-nvmet-auth.sh
# NVMe/RDMA over soft-RoCE, everything inside the guest (skipped when built without RDMA).
rdma_interop_tests = tests/interop/rdma-kernel-host.sh tests/interop/rdma-initiator.sh
TESTS += $(rdma_interop_tests)
dist_check_SCRIPTS += $(rdma_interop_tests)
EXTRA_DIST += tests/interop/rdma-lib.sh tests/interop/rdma-guest.sh
# NVMe/RDMA fault injection (rdma-fault.sh): hosts that die mid-transfer, QP errors, bad
# rkeys, from a host written on librdmacm/libibverbs directly.
if HAVE_RDMA
check_PROGRAMS += tests/interop/rdma_fault_client
tests_interop_rdma_fault_client_SOURCES = tests/interop/rdma_fault_client.c
tests_interop_rdma_fault_client_CFLAGS = $(AM_CFLAGS) $(RDMA_CFLAGS)
tests_interop_rdma_fault_client_LDADD = libnvmeof_common.la $(ISAL_LIBS) $(RDMA_LIBS)
endif
EXTRA_DIST += tests/interop/rdma_fault_client.c
TESTS += tests/interop/rdma-fault.sh
dist_check_SCRIPTS += tests/interop/rdma-fault.sh
# NVMe/RDMA queues that never send Connect (connecting limit, Connect deadline, buffers
# registered before Connect) and Connects whose QID differs from the CM request's.
TESTS += tests/interop/rdma-preconnect.sh
dist_check_SCRIPTS += tests/interop/rdma-preconnect.sh
# Deployment scenarios: configuration file with access control, advertised address,
# discovery on 8009 and SIGHUP reload; target restarts under a mounted filesystem; the
# open-iscsi initiator (CHAP, digests) on the iSCSI portals.
prod_interop_tests = tests/interop/prod-access-discovery.sh tests/interop/prod-restart.sh \
	tests/interop/open-iscsi.sh
TESTS += $(prod_interop_tests)
dist_check_SCRIPTS += $(prod_interop_tests)
EXTRA_DIST += tests/interop/prod-lib.sh tests/interop/guest-prod-lib.sh \
	tests/interop/guest-prod-access-discovery.sh tests/interop/guest-prod-restart.sh \
	tests/interop/guest-open-iscsi.sh
# Power cut: the target in the guest on a virtio disk, qemu killed under a FUA/Flush
# workload from the host, then every acknowledged durable write read back (NVMe/TCP and
# iSCSI); a target run with --unsafe-ignore-flush must be caught losing writes.
check_PROGRAMS += tests/interop/durability_writer
tests_interop_durability_writer_SOURCES = tests/interop/durability_writer.c
tests_interop_durability_writer_CFLAGS = $(HOST_CFLAGS)
tests_interop_durability_writer_LDADD = libnvmeof.la
TESTS += tests/interop/durability.sh
dist_check_SCRIPTS += tests/interop/durability.sh
EXTRA_DIST += tests/interop/guest-durability.sh
# NVMe in-band authentication (DH-HMAC-CHAP) with the 6.12 kernel host (the test boots the
# backports kernel itself): unidirectional and bidirectional, wrong and missing secrets.
TESTS += tests/interop/auth-kernel-host.sh
dist_check_SCRIPTS += tests/interop/auth-kernel-host.sh
EXTRA_DIST += tests/interop/guest-auth-kernel-host.sh
# Two gateways exporting one Ceph RBD image (one-node cluster from tests/ceph): multipath
# failover through a gateway's kill -9 and restart, reservations across gateways. Skips
# without the Ceph packages or librbd, except under CI=true.
TESTS += tests/interop/rbd-gateways.sh
dist_check_SCRIPTS += tests/interop/rbd-gateways.sh
EXTRA_DIST += tests/interop/guest-rbd-gateways.sh
# NVMe passthrough and direct block devices on qemu's emulated NVMe drive (nvme-passthru.sh).
TESTS += tests/interop/nvme-passthru.sh
dist_check_SCRIPTS += tests/interop/nvme-passthru.sh
EXTRA_DIST += tests/interop/guest-nvme-passthru.sh
