# target/ctl/: nvmeof-ctl, the administrator's client of the daemon's control socket
# (target/daemon/control.c). It speaks JSON-RPC only and links no target code.
sbin_PROGRAMS += target/nvmeof-ctl
target_nvmeof_ctl_SOURCES = target/ctl/ctl.c
target_nvmeof_ctl_CFLAGS = $(TARGET_CFLAGS) $(JSONC_CFLAGS)
target_nvmeof_ctl_LDADD = $(JSONC_LIBS)
dist_man_MANS += man/nvmeof-ctl.8
