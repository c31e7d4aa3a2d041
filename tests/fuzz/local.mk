# tests/fuzz/: libFuzzer targets (configure --enable-fuzz, CC=clang), their seed corpora
# (corpus/NAME) and regression inputs (regress/NAME: inputs that once failed). Every
# target is also linked with replay_main.c into a make-check program that runs its corpus
# and regression inputs once, with any compiler.
#
#   make fuzz-smoke                  each fuzzer for FUZZ_SECONDS (default 30) seconds
#   make fuzz-smoke FUZZ_SECONDS=60 FUZZ_TARGETS="tcp_recv config"
FUZZ_SECONDS = 30
FUZZ_TARGETS = tcp_recv fabrics iscsi iscsi_conn scsi_xlate config initiator auth tls_recv
EXTRA_DIST += tests/fuzz/corpus tests/fuzz/regress tests/fuzz/smoke.sh tests/fuzz/fuzz.h

fuzz_tcp_recv_src = tests/fuzz/fuzz_tcp_recv.c tests/fuzz/fuzz.h
fuzz_tcp_recv_libs = libnvmeof_tcp.la libnvmeof_core.la libnvmeof_bdev.la \
	libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) $(URING_LIBS) $(OPENSSL_LIBS) \
	$(ISAL_LIBS)
fuzz_tls_recv_src = tests/fuzz/fuzz_tls_recv.c tests/fuzz/fuzz.h
fuzz_tls_recv_libs = $(fuzz_tcp_recv_libs)
fuzz_iscsi_conn_src = tests/fuzz/fuzz_iscsi_conn.c tests/fuzz/fuzz.h
fuzz_iscsi_conn_libs = libnvmeof_iscsi.la libnvmeof_scsi.la libnvmeof_tcp.la libnvmeof_core.la libnvmeof_tcp.la \
	libnvmeof_bdev.la libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) $(URING_LIBS) \
	$(OPENSSL_LIBS) $(ISAL_LIBS) $(JSONC_LIBS)
fuzz_fabrics_src = tests/fuzz/fuzz_fabrics.c tests/fuzz/fuzz.h $(CORE_UT_SOURCES)
fuzz_fabrics_libs = libnvmeof_core.la libnvmeof_common.la $(OPENSSL_LIBS) $(EV_LIBS) \
	$(UT_LIBS)
fuzz_iscsi_src = tests/fuzz/fuzz_iscsi.c tests/fuzz/fuzz.h
fuzz_iscsi_libs = libnvmeof_common.la $(ISAL_LIBS)
fuzz_scsi_xlate_src = tests/fuzz/fuzz_scsi_xlate.c tests/fuzz/fuzz.h
fuzz_scsi_xlate_libs = libnvmeof_scsi.la libnvmeof_common.la
fuzz_config_src = tests/fuzz/fuzz_config.c tests/fuzz/fuzz.h
fuzz_config_libs = libnvmeof_config.la libnvmeof_common.la $(JSONC_LIBS)
fuzz_auth_src = tests/fuzz/fuzz_auth.c tests/fuzz/fuzz.h
fuzz_auth_libs = libnvmeof_auth.la libnvmeof_common.la $(OPENSSL_LIBS)
fuzz_initiator_src = tests/fuzz/fuzz_initiator.c tests/fuzz/fuzz.h
fuzz_initiator_libs = libnvmeof_initiator.la libnvmeof_common.la $(ISAL_LIBS) \
	$(OPENSSL_LIBS)

fuzz_cflags = $(UT_CFLAGS) -I$(top_srcdir)/initiator/lib -I$(top_srcdir)/tests/fuzz
replay_cflags = $(fuzz_cflags) -DFUZZ_SRCDIR='"$(abs_top_srcdir)"'

# make check: replay corpus + regression inputs through each target.
replay_progs = tests/fuzz/replay_tcp_recv tests/fuzz/replay_fabrics tests/fuzz/replay_iscsi \
	tests/fuzz/replay_iscsi_conn \
	tests/fuzz/replay_scsi_xlate tests/fuzz/replay_config tests/fuzz/replay_initiator \
	tests/fuzz/replay_auth tests/fuzz/replay_tls_recv
check_PROGRAMS += $(replay_progs)
TESTS += $(replay_progs)
tests_fuzz_replay_tcp_recv_SOURCES = $(fuzz_tcp_recv_src) tests/fuzz/replay_main.c
tests_fuzz_replay_tcp_recv_CFLAGS = $(replay_cflags) -DFUZZ_NAME='"tcp_recv"'
tests_fuzz_replay_tcp_recv_LDADD = $(fuzz_tcp_recv_libs) $(UT_LIBS)
tests_fuzz_replay_tls_recv_SOURCES = $(fuzz_tls_recv_src) tests/fuzz/replay_main.c
tests_fuzz_replay_tls_recv_CFLAGS = $(replay_cflags) $(OPENSSL_CFLAGS) -DFUZZ_NAME='"tls_recv"'
tests_fuzz_replay_tls_recv_LDADD = $(fuzz_tls_recv_libs) $(UT_LIBS)
tests_fuzz_replay_fabrics_SOURCES = $(fuzz_fabrics_src) tests/fuzz/replay_main.c
tests_fuzz_replay_fabrics_CFLAGS = $(replay_cflags) $(OPENSSL_CFLAGS) -DFUZZ_NAME='"fabrics"'
tests_fuzz_replay_fabrics_LDADD = $(fuzz_fabrics_libs)
tests_fuzz_replay_iscsi_SOURCES = $(fuzz_iscsi_src) tests/fuzz/replay_main.c
tests_fuzz_replay_iscsi_CFLAGS = $(replay_cflags) -DFUZZ_NAME='"iscsi"'
tests_fuzz_replay_iscsi_LDADD = $(fuzz_iscsi_libs) $(UT_LIBS)
tests_fuzz_replay_iscsi_conn_SOURCES = $(fuzz_iscsi_conn_src) tests/fuzz/replay_main.c
tests_fuzz_replay_iscsi_conn_CFLAGS = $(replay_cflags) $(OPENSSL_CFLAGS) -DFUZZ_NAME='"iscsi_conn"'
tests_fuzz_replay_iscsi_conn_LDADD = $(fuzz_iscsi_conn_libs) $(UT_LIBS)
tests_fuzz_replay_scsi_xlate_SOURCES = $(fuzz_scsi_xlate_src) tests/fuzz/replay_main.c
tests_fuzz_replay_scsi_xlate_CFLAGS = $(replay_cflags) -DFUZZ_NAME='"scsi_xlate"'
tests_fuzz_replay_scsi_xlate_LDADD = $(fuzz_scsi_xlate_libs) $(UT_LIBS)
tests_fuzz_replay_config_SOURCES = $(fuzz_config_src) tests/fuzz/replay_main.c
tests_fuzz_replay_config_CFLAGS = $(replay_cflags) $(JSONC_CFLAGS) -DFUZZ_NAME='"config"'
tests_fuzz_replay_config_LDADD = $(fuzz_config_libs) $(UT_LIBS)
tests_fuzz_replay_initiator_SOURCES = $(fuzz_initiator_src) tests/fuzz/replay_main.c
tests_fuzz_replay_initiator_CFLAGS = $(replay_cflags) -DFUZZ_NAME='"initiator"'
tests_fuzz_replay_initiator_LDADD = $(fuzz_initiator_libs) $(UT_LIBS)
tests_fuzz_replay_auth_SOURCES = $(fuzz_auth_src) tests/fuzz/replay_main.c
tests_fuzz_replay_auth_CFLAGS = $(replay_cflags) $(OPENSSL_CFLAGS) -DFUZZ_NAME='"auth"'
tests_fuzz_replay_auth_LDADD = $(fuzz_auth_libs) $(UT_LIBS)

if ENABLE_FUZZ
# libFuzzer drivers (the libraries are built with -fsanitize=fuzzer-no-link by configure).
fuzz_progs = tests/fuzz/fuzz_tcp_recv tests/fuzz/fuzz_fabrics tests/fuzz/fuzz_iscsi \
	tests/fuzz/fuzz_iscsi_conn \
	tests/fuzz/fuzz_scsi_xlate tests/fuzz/fuzz_config tests/fuzz/fuzz_initiator \
	tests/fuzz/fuzz_auth tests/fuzz/fuzz_tls_recv
noinst_PROGRAMS += $(fuzz_progs)
fuzz_ldflags = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_tcp_recv_SOURCES = $(fuzz_tcp_recv_src)
tests_fuzz_fuzz_tcp_recv_CFLAGS = $(fuzz_cflags)
tests_fuzz_fuzz_tcp_recv_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_tcp_recv_LDADD = $(fuzz_tcp_recv_libs)
tests_fuzz_fuzz_tls_recv_SOURCES = $(fuzz_tls_recv_src)
tests_fuzz_fuzz_tls_recv_CFLAGS = $(fuzz_cflags) $(OPENSSL_CFLAGS)
tests_fuzz_fuzz_tls_recv_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_tls_recv_LDADD = $(fuzz_tls_recv_libs)
tests_fuzz_fuzz_fabrics_SOURCES = $(fuzz_fabrics_src)
tests_fuzz_fuzz_fabrics_CFLAGS = $(fuzz_cflags) $(OPENSSL_CFLAGS)
tests_fuzz_fuzz_fabrics_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_fabrics_LDADD = $(fuzz_fabrics_libs)
tests_fuzz_fuzz_iscsi_SOURCES = $(fuzz_iscsi_src)
tests_fuzz_fuzz_iscsi_CFLAGS = $(fuzz_cflags)
tests_fuzz_fuzz_iscsi_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_iscsi_LDADD = $(fuzz_iscsi_libs)
tests_fuzz_fuzz_iscsi_conn_SOURCES = $(fuzz_iscsi_conn_src)
tests_fuzz_fuzz_iscsi_conn_CFLAGS = $(fuzz_cflags) $(OPENSSL_CFLAGS)
tests_fuzz_fuzz_iscsi_conn_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_iscsi_conn_LDADD = $(fuzz_iscsi_conn_libs)
tests_fuzz_fuzz_scsi_xlate_SOURCES = $(fuzz_scsi_xlate_src)
tests_fuzz_fuzz_scsi_xlate_CFLAGS = $(fuzz_cflags)
tests_fuzz_fuzz_scsi_xlate_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_scsi_xlate_LDADD = $(fuzz_scsi_xlate_libs)
tests_fuzz_fuzz_config_SOURCES = $(fuzz_config_src)
tests_fuzz_fuzz_config_CFLAGS = $(fuzz_cflags) $(JSONC_CFLAGS)
tests_fuzz_fuzz_config_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_config_LDADD = $(fuzz_config_libs)
tests_fuzz_fuzz_initiator_SOURCES = $(fuzz_initiator_src)
tests_fuzz_fuzz_initiator_CFLAGS = $(fuzz_cflags)
tests_fuzz_fuzz_initiator_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_initiator_LDADD = $(fuzz_initiator_libs)
tests_fuzz_fuzz_auth_SOURCES = $(fuzz_auth_src)
tests_fuzz_fuzz_auth_CFLAGS = $(fuzz_cflags) $(OPENSSL_CFLAGS)
tests_fuzz_fuzz_auth_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_auth_LDADD = $(fuzz_auth_libs)

fuzz-smoke: $(fuzz_progs)
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_TARGETS="$(FUZZ_TARGETS)" \
		sh $(top_srcdir)/tests/fuzz/smoke.sh $(abs_top_builddir)/tests/fuzz \
		$(abs_top_srcdir)/tests/fuzz
else
fuzz-smoke:
	@echo "fuzz-smoke: configure with --enable-fuzz (and CC=clang) to build the fuzz targets" >&2
	@exit 1
endif
.PHONY: fuzz-smoke

# The host's DH-HMAC-CHAP message checks (initiator/lib/nvme/host_auth.c).
FUZZ_TARGETS += host_auth
fuzz_host_auth_src = tests/fuzz/fuzz_host_auth.c tests/fuzz/fuzz.h
check_PROGRAMS += tests/fuzz/replay_host_auth
TESTS += tests/fuzz/replay_host_auth
tests_fuzz_replay_host_auth_SOURCES = $(fuzz_host_auth_src) tests/fuzz/replay_main.c
tests_fuzz_replay_host_auth_CFLAGS = $(replay_cflags) -DFUZZ_NAME='"host_auth"'
tests_fuzz_replay_host_auth_LDADD = $(fuzz_initiator_libs) $(UT_LIBS)
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_host_auth
# (fuzz-smoke's prerequisites were expanded above: name this one here)
fuzz-smoke: tests/fuzz/fuzz_host_auth
tests_fuzz_fuzz_host_auth_SOURCES = $(fuzz_host_auth_src)
tests_fuzz_fuzz_host_auth_CFLAGS = $(fuzz_cflags)
tests_fuzz_fuzz_host_auth_LDFLAGS = $(fuzz_ldflags)
tests_fuzz_fuzz_host_auth_LDADD = $(fuzz_initiator_libs)
endif
