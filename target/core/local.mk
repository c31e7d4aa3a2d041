# target/core/: subsystems, controllers, fabrics/admin/NVM command handlers, log pages,
# features, reservations, fused Compare and Write, LBA status, discovery, ports, and the
# transport and backend interfaces the other rooms plug into.
noinst_LTLIBRARIES += libnvmeof_core.la
libnvmeof_core_la_SOURCES = \
	target/core/nvmf.h target/core/transport.h target/core/transport.c \
	target/core/ctrlr.c target/core/ctrlr.h \
	target/core/ctrlr_local.c \
	target/core/ctrlr_stats.c \
	target/core/error_log.c \
	target/core/qpair.c \
	target/core/property.c \
	target/core/keep_alive.c \
	target/core/aen.c \
	target/core/request.c \
	target/core/dispatch.c target/core/dispatch.h \
	target/core/fabrics.c \
	target/core/fabrics_auth.c \
	target/core/auth_pool.c target/core/auth_pool.h \
	target/core/admin.c \
	target/core/log_page.c \
	target/core/features.c \
	target/core/io.c \
	target/core/discovery.c \
	target/core/subsystem.c \
	target/core/port.c \
	target/core/reservation.c target/core/reservation.h target/core/reservation_internal.h \
	target/core/reservation_notify.c target/core/reservation_legacy.c \
	target/core/resv_store.h target/core/resv_store_file.c \
	target/core/fused.c target/core/fused.h \
	target/core/lba_status.c target/core/lba_status.h \
	target/core/mgmt.c \
	target/core/range_lock.c target/core/range_lock.h \
	target/core/abort.c target/core/abort.h \
	target/core/ana.c target/core/ana.h \
	target/core/ns_ident.c target/core/ns_ident.h \
	target/core/ns_stats.c \
	target/core/qos.c target/core/qos.h \
	target/core/host_psk.c \
	target/core/state_dir.c target/core/state_dir.h \
	target/core/host_share.c
libnvmeof_core_la_CFLAGS = $(TARGET_CFLAGS) $(EV_CFLAGS) $(OPENSSL_CFLAGS)
libnvmeof_core_la_LIBADD = libnvmeof_auth.la $(OPENSSL_LIBS)

# Unit tests: each links the core with the fakes in tests/unit/target/core/fakes.c
# (transport, reactors, bdev) instead of the real transport, reactors and backends.
CORE_UT_SOURCES = tests/unit/target/core/fakes.c tests/unit/target/core/fakes.h
CORE_UT_CFLAGS = $(UT_CFLAGS) $(OPENSSL_CFLAGS)
CORE_UT_LIBS = libnvmeof_core.la libnvmeof_common.la $(OPENSSL_LIBS) $(EV_LIBS) $(UT_LIBS)
CORE_UTS = tests/unit/target/core/ctrlr_ut tests/unit/target/core/fabrics_ut \
	tests/unit/target/core/admin_ut tests/unit/target/core/log_page_ut \
	tests/unit/target/core/features_ut tests/unit/target/core/io_ut \
	tests/unit/target/core/discovery_ut tests/unit/target/core/subsystem_ut \
	tests/unit/target/core/reservation_ut tests/unit/target/core/dispatch_ut \
	tests/unit/target/core/resv_store_file_ut \
	tests/unit/target/core/abort_ut \
	tests/unit/target/core/ana_ut tests/unit/target/core/identity_ut
check_PROGRAMS += $(CORE_UTS)
TESTS += $(CORE_UTS)
tests_unit_target_core_ctrlr_ut_SOURCES = tests/unit/target/core/ctrlr_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_ctrlr_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_ctrlr_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_fabrics_ut_SOURCES = tests/unit/target/core/fabrics_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_fabrics_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_fabrics_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_admin_ut_SOURCES = tests/unit/target/core/admin_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_admin_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_admin_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_log_page_ut_SOURCES = tests/unit/target/core/log_page_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_log_page_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_log_page_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_features_ut_SOURCES = tests/unit/target/core/features_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_features_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_features_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_io_ut_SOURCES = tests/unit/target/core/io_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_io_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_io_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_discovery_ut_SOURCES = tests/unit/target/core/discovery_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_discovery_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_discovery_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_subsystem_ut_SOURCES = tests/unit/target/core/subsystem_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_subsystem_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_subsystem_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_reservation_ut_SOURCES = tests/unit/target/core/reservation_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_reservation_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_reservation_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_resv_store_file_ut_SOURCES = tests/unit/target/core/resv_store_file_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_resv_store_file_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_resv_store_file_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_dispatch_ut_SOURCES = tests/unit/target/core/dispatch_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_dispatch_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_dispatch_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_abort_ut_SOURCES = tests/unit/target/core/abort_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_abort_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_abort_ut_LDADD = $(CORE_UT_LIBS)

# Compare and Write against Writes with the real core, backends and two reactors.
check_PROGRAMS += tests/unit/target/core/caw_race_ut
TESTS += tests/unit/target/core/caw_race_ut
tests_unit_target_core_caw_race_ut_SOURCES = tests/unit/target/core/caw_race_ut.c
tests_unit_target_core_caw_race_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_core_caw_race_ut_LDADD = libnvmeof_core.la libnvmeof_bdev.la \
	libnvmeof_reactor.la libnvmeof_common.la \
	$(EV_LIBS) $(URING_LIBS) $(RBD_LIBS) $(OPENSSL_LIBS) $(UT_LIBS)
tests_unit_target_core_ana_ut_SOURCES = tests/unit/target/core/ana_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_ana_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_ana_ut_LDADD = $(CORE_UT_LIBS)
tests_unit_target_core_identity_ut_SOURCES = tests/unit/target/core/identity_ut.c $(CORE_UT_SOURCES)
tests_unit_target_core_identity_ut_CFLAGS = $(CORE_UT_CFLAGS)
tests_unit_target_core_identity_ut_LDADD = $(CORE_UT_LIBS)
