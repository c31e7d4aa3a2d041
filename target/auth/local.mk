# target/auth/: in-band authentication of NVMe queues, the controller side of
# DH-HMAC-CHAP (the per-queue machine, its messages and the per-host settings). Built into
# the target core, which carries the messages in Authentication Send/Receive.
noinst_LTLIBRARIES += libnvmeof_auth.la
libnvmeof_auth_la_SOURCES = \
	target/auth/dhchap_ctrl.h target/auth/auth_internal.h \
	target/auth/dhchap_ctrl.c target/auth/dhchap_msg.c target/auth/dhchap_conf.c \
	target/auth/dhchap_admit.h target/auth/dhchap_admit.c
libnvmeof_auth_la_CFLAGS = $(TARGET_CFLAGS) $(OPENSSL_CFLAGS)
libnvmeof_auth_la_LIBADD = $(OPENSSL_LIBS)

# Unit tests: the machine driven by a host side built from common/dhchap_crypto.
check_PROGRAMS += tests/unit/target/auth/auth_ut
TESTS += tests/unit/target/auth/auth_ut
tests_unit_target_auth_auth_ut_SOURCES = tests/unit/target/auth/auth_ut.c
tests_unit_target_auth_auth_ut_CFLAGS = $(UT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_target_auth_auth_ut_LDADD = libnvmeof_auth.la libnvmeof_common.la $(OPENSSL_LIBS) \
	$(UT_LIBS)

# Unit tests: admission of DH work to the authentication threads (bounds and lanes).
check_PROGRAMS += tests/unit/target/auth/dhchap_admit_ut
TESTS += tests/unit/target/auth/dhchap_admit_ut
tests_unit_target_auth_dhchap_admit_ut_SOURCES = tests/unit/target/auth/dhchap_admit_ut.c
tests_unit_target_auth_dhchap_admit_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_auth_dhchap_admit_ut_LDADD = libnvmeof_auth.la libnvmeof_common.la $(OPENSSL_LIBS) \
	$(UT_LIBS)
