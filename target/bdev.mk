# target/ namespace backends (ram, null, file via io_uring).
noinst_LTLIBRARIES += libnvmeof_bdev.la
libnvmeof_bdev_la_SOURCES = \
	target/bdev.h
libnvmeof_bdev_la_CFLAGS = $(AM_CFLAGS) $(URING_CFLAGS)
libnvmeof_bdev_la_LIBADD = $(URING_LIBS)
