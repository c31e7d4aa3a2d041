# target/ core: subsystems, controllers, fabrics/admin/NVM command handlers, discovery.
noinst_LTLIBRARIES += libnvmeof_core.la
libnvmeof_core_la_SOURCES = \
	target/nvmf.h target/transport.h
libnvmeof_core_la_CFLAGS = $(AM_CFLAGS) $(EV_CFLAGS)
