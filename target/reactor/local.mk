# target/reactor/: one libev loop per CPU, messages between them, timers.
noinst_LTLIBRARIES += libnvmeof_reactor.la
libnvmeof_reactor_la_SOURCES = target/reactor/reactor.c target/reactor/reactor.h \
	target/reactor/xlate_timer.h
libnvmeof_reactor_la_CFLAGS = $(TARGET_CFLAGS)
libnvmeof_reactor_la_LIBADD = $(EV_LIBS)

check_PROGRAMS += tests/unit/target/reactor/reactor_ut
TESTS += tests/unit/target/reactor/reactor_ut
tests_unit_target_reactor_reactor_ut_SOURCES = tests/unit/target/reactor/reactor_ut.c
tests_unit_target_reactor_reactor_ut_CFLAGS = $(UT_CFLAGS)
tests_unit_target_reactor_reactor_ut_LDADD = libnvmeof_reactor.la libnvmeof_common.la \
	$(EV_LIBS) $(UT_LIBS)
