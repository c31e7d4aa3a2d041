# initiator/cli/: the nvmeof command-line tool.
bin_PROGRAMS += initiator/nvmeof
initiator_nvmeof_SOURCES = initiator/cli/cli.c initiator/cli/cli.h initiator/cli/cli_admin.c \
	initiator/cli/cli_nvm.c initiator/cli/cli_info.c initiator/cli/cli_iscsi.c \
	common/json_writer.c common/json_writer.h
initiator_nvmeof_CFLAGS = $(HOST_CFLAGS)
initiator_nvmeof_LDADD = libnvmeof.la
dist_man_MANS += man/nvmeof.1
