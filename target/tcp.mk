# target/ reactors, the NVMe/TCP transport and the daemon's main().
noinst_LTLIBRARIES += libnvmeof_reactor.la libnvmeof_tcp.la
libnvmeof_reactor_la_SOURCES = \
	target/reactor.h
libnvmeof_reactor_la_LIBADD = $(EV_LIBS)
libnvmeof_tcp_la_SOURCES = \
	target/transport.h

sbin_PROGRAMS += target/nvmeof-target
target_nvmeof_target_SOURCES = target/main.c
target_nvmeof_target_LDADD = libnvmeof_tcp.la libnvmeof_core.la libnvmeof_bdev.la \
	libnvmeof_reactor.la libnvmeof_common.la $(EV_LIBS) $(URING_LIBS) $(JSONC_LIBS) \
	$(OPENSSL_LIBS) $(ISAL_LIBS)
