# target/ configuration: the nvmetcli-format JSON loader, applying it to the target core
# (at start and on SIGHUP), and the daemon's service plumbing (pidfile, syslog, notify).
noinst_LTLIBRARIES += libnvmeof_config.la
libnvmeof_config_la_SOURCES = \
	target/config_file.c target/config_file.h target/config_model.c target/config_apply.c \
	target/service.c target/service.h
libnvmeof_config_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
libnvmeof_config_la_LIBADD = $(JSONC_LIBS)

# Unit tests: the loader over the nvmetcli fixtures (kept beside the source tree, in
# ../shared/fixtures/nvmetcli; NVMETCLI_FIXTURES=DIR overrides), the example configs in
# conf/ (shipped by EXTRA_DIST's conf) and broken inputs.
check_PROGRAMS += tests/unit/target/config_ut
TESTS += tests/unit/target/config_ut
tests_unit_target_config_ut_SOURCES = tests/unit/target/config_ut.c
tests_unit_target_config_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS) \
	-DCONFIG_FIXTURE_DIR='"$(abs_top_srcdir)/../shared/fixtures/nvmetcli"' \
	-DCONFIG_CONF_DIR='"$(abs_top_srcdir)/conf"'
tests_unit_target_config_ut_LDADD = libnvmeof_config.la libnvmeof_common.la $(UT_LIBS) \
	$(JSONC_LIBS)

# config_apply() and config_reload() against a fake target core (in the test itself).
check_PROGRAMS += tests/unit/target/config_apply_ut
TESTS += tests/unit/target/config_apply_ut
tests_unit_target_config_apply_ut_SOURCES = tests/unit/target/config_apply_ut.c
tests_unit_target_config_apply_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_target_config_apply_ut_LDADD = libnvmeof_config.la libnvmeof_common.la $(UT_LIBS) \
	$(JSONC_LIBS)

# Daemon mode, pidfile and service-manager notifications.
check_PROGRAMS += tests/unit/target/service_ut
TESTS += tests/unit/target/service_ut
tests_unit_target_service_ut_SOURCES = tests/unit/target/service_ut.c
tests_unit_target_service_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_service_ut_LDADD = libnvmeof_config.la libnvmeof_common.la $(UT_LIBS)
