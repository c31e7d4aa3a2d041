# initiator/cli/: the nvmeof command-line tool.
bin_PROGRAMS += initiator/nvmeof
initiator_nvmeof_SOURCES = initiator/cli/cli.c initiator/cli/cli.h initiator/cli/cli_admin.c \
	initiator/cli/cli_nvm.c initiator/cli/cli_info.c initiator/cli/cli_iscsi.c \
	common/json_writer.c common/json_writer.h common/key_file.c common/key_file.h
initiator_nvmeof_CFLAGS = $(HOST_CFLAGS) $(OPENSSL_CFLAGS)
initiator_nvmeof_LDADD = libnvmeof.la $(OPENSSL_LIBS)
dist_man_MANS += man/nvmeof.1
