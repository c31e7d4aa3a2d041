# tests/ceph/: a one-node Ceph cluster for tests (ceph-cluster.sh) and librbd's
# asynchronous C API against it (rbd_aio_probe, built when configure finds librbd).
# ceph-smoke.sh and rbd-namespace.sh (nvmeof-target serving an RBD image) skip (exit 77)
# without the Ceph packages or librbd, except under CI=true.
if HAVE_RBD
check_PROGRAMS += tests/ceph/rbd_aio_probe
tests_ceph_rbd_aio_probe_SOURCES = tests/ceph/rbd_aio_probe.c
tests_ceph_rbd_aio_probe_LDADD = $(RBD_LIBS)
endif
TESTS += tests/ceph/ceph-smoke.sh tests/ceph/rbd-namespace.sh
dist_check_SCRIPTS += tests/ceph/ceph-smoke.sh tests/ceph/rbd-namespace.sh
EXTRA_DIST += tests/ceph/ceph-cluster.sh tests/ceph/README.md
