# target/config/: the nvmetcli-format JSON loader, its model, and applying it to the
# target core (at start and on SIGHUP).
noinst_LTLIBRARIES += libnvmeof_config.la
libnvmeof_config_la_SOURCES = \
	target/config/config_file.h target/config/config_internal.h \
	target/config/config_file.c target/config/config_json.c target/config/config_values.c \
	target/config/config_ports.c target/config/config_subsys.c \
	target/config/config_model.c target/config/config_apply.c \
	target/config/config_save.c target/config/config_ana.c \
	target/config/config_iscsi.c target/config/config_tls.c
libnvmeof_config_la_CFLAGS = $(TARGET_CFLAGS) $(JSONC_CFLAGS)
libnvmeof_config_la_LIBADD = $(JSONC_LIBS)

# Unit tests: the loader over the nvmetcli fixtures in tests/fixtures/nvmetcli (saved by
# nvmetcli; NVMETCLI_FIXTURES=DIR adds another directory), the example configs in conf/
# and broken inputs.
check_PROGRAMS += tests/unit/target/config/config_ut
TESTS += tests/unit/target/config/config_ut
tests_unit_target_config_config_ut_SOURCES = tests/unit/target/config/config_ut.c
tests_unit_target_config_config_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS) \
	-DCONFIG_FIXTURE_DIR='"$(abs_top_srcdir)/tests/fixtures/nvmetcli"' \
	-DCONFIG_CONF_DIR='"$(abs_top_srcdir)/conf"'
tests_unit_target_config_config_ut_LDADD = libnvmeof_config.la libnvmeof_common.la \
	$(UT_LIBS) $(JSONC_LIBS)
EXTRA_DIST += tests/fixtures

# config_apply() and config_reload() against a fake target core (in the test itself).
check_PROGRAMS += tests/unit/target/config/config_apply_ut
TESTS += tests/unit/target/config/config_apply_ut
tests_unit_target_config_config_apply_ut_SOURCES = tests/unit/target/config/config_apply_ut.c
tests_unit_target_config_config_apply_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_target_config_config_apply_ut_LDADD = libnvmeof_config.la libnvmeof_common.la \
	$(UT_LIBS) $(JSONC_LIBS)

# config_save: load, save, load again and compare the models; secrets and file modes.
check_PROGRAMS += tests/unit/target/config/config_save_ut
TESTS += tests/unit/target/config/config_save_ut
tests_unit_target_config_config_save_ut_SOURCES = tests/unit/target/config/config_save_ut.c
tests_unit_target_config_config_save_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS) \
	-DCONFIG_FIXTURE_DIR='"$(abs_top_srcdir)/tests/fixtures/nvmetcli"' \
	-DCONFIG_CONF_DIR='"$(abs_top_srcdir)/conf"'
tests_unit_target_config_config_save_ut_LDADD = libnvmeof_config.la libnvmeof_common.la \
	$(UT_LIBS) $(JSONC_LIBS)

# The "iscsi" section's checks and the lines of warnings.
check_PROGRAMS += tests/unit/target/config/config_iscsi_ut
TESTS += tests/unit/target/config/config_iscsi_ut
tests_unit_target_config_config_iscsi_ut_SOURCES = tests/unit/target/config/config_iscsi_ut.c
tests_unit_target_config_config_iscsi_ut_CFLAGS = $(UT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_target_config_config_iscsi_ut_LDADD = libnvmeof_config.la libnvmeof_common.la \
	$(UT_LIBS) $(JSONC_LIBS)
