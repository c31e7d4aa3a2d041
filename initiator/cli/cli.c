/* SPDX-License-Identifier: MIT */
/*
 * nvmeof: command-line NVMe over Fabrics host built on libnvmeof's public API.
 *
 *   nvmeof discover URI | identify URI | list-ns URI | flush URI
 *   nvmeof read URI --lba N --blocks N [-d FILE]
 *   nvmeof write URI --lba N [--blocks N] [-d FILE] [--fua]
 *   and nvme-cli's get-log, get-feature, set-feature, id-ctrl, id-ns, compare,
 *   write-zeroes, dsm, verify, resv-* (cli_admin.c, cli_nvm.c); -o normal|json on all.
 *
 * Exit status: 0 success, 1 the controller returned an error status (printed by name),
 * 2 usage or URI error, 3 connection or transport failure.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json_writer.h"
#include "common/key_file.h"
#include "lib/nvmeof.h"

#include "cli.h"

void die_usage(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nvmeof: %s%s", c->cmd ? c->cmd : "", c->cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'nvmeof %s%s--help')\n", c->cmd ? c->cmd : "", c->cmd ? " " : "");
	exit(EXIT_USAGE);
}

static void log_to_stderr(enum nvmeof_log_level level, const char *msg, void *arg)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	(void)arg;
	fprintf(stderr, "nvmeof: %s: %s\n", names[level], msg);
}

/* Map a failed library call to an exit status, printing one line. */
int fail(const struct cli *c, const char *what, int rc, const struct nvmeof_qpair *qp)
{
	char st[128];

	if (rc > 0) {
		fprintf(stderr, "nvmeof: %s: %s\n", what,
			nvmeof_status_str((uint16_t)rc, st, sizeof(st)));
		return EXIT_NVME;
	}
	if (qp && nvmeof_qpair_error(qp)[0])
		fprintf(stderr, "nvmeof: %s: %s\n", what, nvmeof_qpair_error(qp));
	else if (nvmeof_last_error()[0])
		fprintf(stderr, "nvmeof: %s: %s\n", what, nvmeof_last_error());
	else
		fprintf(stderr, "nvmeof: %s: %s\n", what, nvmeof_strerror(rc));
	(void)c;
	return EXIT_TRANSPORT;
}

void print_done(const struct cli *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->json) {
		printf("{\n  \"command\": \"%s\",\n  \"status\": \"ok\",\n  \"result\": ", c->cmd);
		json_write_str(stdout, msg);
		printf("\n}\n");
	} else if (c->verbose || c->file == NULL || strcmp(c->cmd, "read") != 0) {
		printf("%s: %s\n", c->cmd, msg);
	}
}

int connect_ctrlr(struct cli *c, unsigned int io_queues, struct nvmeof_ctrlr **ctrlr)
{
	int rc;

	c->opts.io_queues = io_queues;
	rc = nvmeof_ctrlr_connect(c->uri, &c->opts, ctrlr);
	if (rc == 0)
		return 0;
	fprintf(stderr, "nvmeof: %s: %s\n", c->cmd, nvmeof_last_error());
	if (rc == -EINVAL)
		return EXIT_USAGE;
	if (rc == -ENODEV)
		return EXIT_NVME;
	return EXIT_TRANSPORT;
}

/* ---- JSON output ---------------------------------------------------------------------- */

void hex(char *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

void uuid_text(char *out, const uint8_t *u)
{
	sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		u[14], u[15]);
}

void human_size(char *out, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, u ? "%.2f %s" : "%.0f %s", v, units[u]);
}

/* ---- read / write / flush ---------------------------------------------------------------------
 */
static int write_full(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t read_full(int fd, uint8_t *p, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Connect with one I/O queue and find the namespace; checks --lba/--blocks. */
int open_io(struct cli *c, struct nvmeof_ctrlr **ctrlr, struct nvmeof_ns **ns, bool need_range)
{
	int rc;

	if (need_range && (!c->have_lba || !c->have_blocks))
		die_usage(c, "--lba and --blocks are required");
	if (need_range && c->blocks == 0)
		die_usage(c, "--blocks must be at least 1");
	rc = connect_ctrlr(c, 1, ctrlr);
	if (rc)
		return rc;
	*ns = nvmeof_ctrlr_get_ns(*ctrlr, 0);
	if (!*ns) {
		fprintf(stderr, "nvmeof: %s: %s\n", c->cmd, nvmeof_last_error());
		nvmeof_ctrlr_disconnect(*ctrlr);
		return EXIT_NVME;
	}
	return 0;
}

static int cmd_rw(struct cli *c, bool write)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint32_t bs, per;
	uint64_t done = 0;
	uint8_t *buf = NULL;
	char tmp[4096] = "";
	struct stat ost;
	int fd, rc, ret = 0;

	if (!write && c->file && c->json)
		; /* the data goes to the file, the JSON status to stdout */
	else if (!write && c->json)
		die_usage(c, "-o json needs the data in a file (-d FILE)");
	if (write && c->file == NULL) {
		fd = STDIN_FILENO;
	} else if (!write && c->file == NULL) {
		fd = STDOUT_FILENO;
	} else if (write) {
		fd = open(c->file, O_RDONLY | O_CLOEXEC);
	} else if (stat(c->file, &ost) == 0 && !S_ISREG(ost.st_mode)) {
		/* a device, FIFO or socket (/dev/null, a block device): written in place;
		 * renaming a temporary over it would replace the device with a file */
		fd = open(c->file, O_WRONLY | O_CLOEXEC);
	} else {
		/* a temporary beside the file, renamed over it once every block is read: a
		 * failed read leaves no file (and an existing one untouched) */
		snprintf(tmp, sizeof(tmp), "%s.nvmeof-XXXXXX", c->file);
		fd = mkstemp(tmp);
	}
	if (fd < 0) {
		fprintf(stderr, "nvmeof: %s: %s: %s\n", c->cmd, c->file, strerror(errno));
		return EXIT_USAGE;
	}
	if (write && !c->have_blocks && fd != STDIN_FILENO) {
		struct stat st;

		/* the block count from the file, as nvme-cli's --data-size */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
			c->blocks = (uint64_t)st.st_size; /* bytes until the block size is known */
			c->have_blocks = true;
			c->blocks_from_file = true;
		}
	}
	rc = open_io(c, &ctrlr, &ns, true);
	if (rc)
		goto out_fd;
	qp = nvmeof_ctrlr_get_qpair(ctrlr, 0);
	bs = nvmeof_ns_get_block_size(ns);
	if (c->blocks_from_file) {
		if (c->blocks % bs) {
			fprintf(stderr,
				"nvmeof: write: %s holds %" PRIu64 " bytes, not a multiple of the "
				"block size %u (give --blocks)\n",
				c->file, c->blocks, bs);
			ret = EXIT_USAGE;
			goto out;
		}
		c->blocks /= bs;
	}
	per = CHUNK_BYTES / bs;
	buf = aligned_alloc(4096, (size_t)per * bs);
	if (!buf) {
		ret = fail(c, c->cmd, -ENOMEM, NULL);
		goto out;
	}
	while (done < c->blocks) {
		uint32_t n = c->blocks - done < per ? (uint32_t)(c->blocks - done) : per;
		size_t bytes = (size_t)n * bs;

		if (write) {
			ssize_t got = read_full(fd, buf, bytes);

			if (got < 0) {
				fprintf(stderr, "nvmeof: write: reading %s: %s\n",
					c->file ? c->file : "standard input", strerror(errno));
				ret = EXIT_USAGE;
				break;
			}
			if ((size_t)got < bytes) {
				fprintf(stderr,
					"nvmeof: write: %s ended after %" PRIu64 " of %" PRIu64
					" bytes\n",
					c->file ? c->file : "standard input",
					done * bs + (uint64_t)got, c->blocks * bs);
				ret = EXIT_USAGE;
				break;
			}
			rc = nvmeof_write_sync(qp, ns, c->lba + done, n, buf,
					       c->fua ? NVMEOF_IO_FUA : 0);
		} else {
			rc = nvmeof_read_sync(qp, ns, c->lba + done, n, buf, 0);
		}
		if (rc) {
			ret = fail(c, c->cmd, rc, qp);
			break;
		}
		if (!write && write_full(fd, buf, bytes)) {
			fprintf(stderr, "nvmeof: read: writing %s: %s\n",
				c->file ? c->file : "standard output", strerror(errno));
			ret = EXIT_USAGE;
			break;
		}
		done += n;
	}
	if (ret == 0 && (c->verbose || c->json))
		print_done(c, "%" PRIu64 " blocks of %u bytes at LBA %" PRIu64, c->blocks, bs,
			   c->lba);
out:
	free(buf);
	nvmeof_ctrlr_disconnect(ctrlr);
	rc = ret;
out_fd:
	if (fd > STDERR_FILENO && close(fd) < 0 && !write && rc == 0) {
		fprintf(stderr, "nvmeof: read: closing %s: %s\n", c->file, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (tmp[0]) {
		if (rc == 0 && rename(tmp, c->file) != 0) {
			fprintf(stderr, "nvmeof: read: %s: %s\n", c->file, strerror(errno));
			rc = EXIT_USAGE;
		}
		if (rc != 0)
			unlink(tmp);
	}
	return rc;
}

static int cmd_read(struct cli *c)
{
	return cmd_rw(c, false);
}

static int cmd_write(struct cli *c)
{
	return cmd_rw(c, true);
}

static int cmd_flush(struct cli *c)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns;
	int rc = open_io(c, &ctrlr, &ns, false);

	if (rc)
		return rc;
	rc = nvmeof_flush_sync(nvmeof_ctrlr_get_qpair(ctrlr, 0), ns);
	if (rc)
		rc = fail(c, "flush", rc, nvmeof_ctrlr_get_qpair(ctrlr, 0));
	else if (c->json)
		print_done(c, "flushed namespace %u", nvmeof_ns_get_id(ns));
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

/* ---- Command table and option parsing ----------------------------------------------------------
 */
#define RANGE_HELP                                                              \
	"  --lba N, -s N       first logical block (nvme-cli: --start-block)\n" \
	"  --blocks N          number of blocks\n"
#define RESV_HELP                                         \
	"  --crkey KEY         current reservation key\n" \
	"  --iekey             ignore the existing key\n"

static const struct command commands[] = {
	{ "discover", cmd_discover, "",
	  "the discovery log of a discovery controller, or an iSCSI portal's targets", "", 0 },
	{ "identify", cmd_identify, "",
	  "controller and namespace summary; on iscsi:// the SCSI logical unit's", "", 0 },
	{ "list-ns", cmd_list_ns, "", "list the active namespaces", "", 0 },
	{ "id-ctrl", cmd_id_ctrl, "",
	  "the Identify Controller data structure; on iscsi:// as identify", "", 0 },
	{ "id-ns", cmd_id_ns, " [--nsid N]",
	  "the Identify Namespace data structure, field by field",
	  "  --nsid N, -n N      namespace (default: the URI's, else the first)\n", CLI_O_LOG },
	{ "read", cmd_read, " --lba N --blocks N [-d FILE]",
	  "read blocks to FILE (default: standard output)",
	  RANGE_HELP "  -d, --data FILE     write the data to FILE (also --output FILE); a failed\n"
		     "                      read leaves no file\n",
	  CLI_O_LBA | CLI_O_OUT },
	{ "write", cmd_write, " --lba N [--blocks N] [-d FILE] [--fua]",
	  "write blocks from FILE (default: standard input)",
	  RANGE_HELP "                      (default: the size of FILE in blocks)\n"
		     "  -d, --data FILE     take the data from FILE (also -i, --input FILE)\n"
		     "  --fua               Force Unit Access\n",
	  CLI_O_LBA | CLI_O_IN | CLI_O_FUA },
	{ "compare", cmd_compare, " --lba N --blocks N [-d FILE]",
	  "compare blocks with FILE (default: standard input); exit 1 when they differ",
	  RANGE_HELP "  -d, --data FILE     the data to compare with (also -i FILE)\n"
		     "  --fua               Force Unit Access\n",
	  CLI_O_LBA | CLI_O_IN | CLI_O_FUA },
	{ "write-zeroes", cmd_write_zeroes, " --lba N --blocks N [--ad] [--fua]",
	  "zero blocks without sending data",
	  RANGE_HELP "  --ad                deallocate them as well\n"
		     "  --fua               Force Unit Access\n",
	  CLI_O_LBA | CLI_O_FUA | CLI_O_AD },
	{ "dsm", cmd_dsm, " --lba N --blocks N --ad",
	  "Dataset Management: deallocate (trim) a range",
	  RANGE_HELP "  --ad                the Deallocate attribute (required)\n",
	  CLI_O_LBA | CLI_O_AD },
	{ "verify", cmd_verify, " --lba N --blocks N", "verify blocks without transferring them",
	  RANGE_HELP, CLI_O_LBA | CLI_O_FUA },
	{ "flush", cmd_flush, "", "flush the namespace's volatile write cache", "", 0 },
	{ "get-log", cmd_get_log, " --log-id ID [--log-len N]", "read a log page",
	  "  --log-id ID, -i ID  smart, error, fw-slot, changed-ns, effects, or a number\n"
	  "  --log-len N, -l N   bytes (default: the page's size)\n"
	  "  --nsid N, -n N      namespace (default: all, 0xffffffff)\n",
	  CLI_O_LOG },
	{ "get-feature", cmd_get_feature, " --feature-id FID [--sel SEL]", "read a feature",
	  "  --feature-id FID, -f FID\n"
	  "  --sel SEL, -s SEL   0 current, 1 default, 2 saved, 3 supported capabilities\n"
	  "  --nsid N, -n N      namespace\n",
	  CLI_O_FEAT },
	{ "set-feature", cmd_set_feature, " --feature-id FID --value V [--save]", "set a feature",
	  "  --feature-id FID, -f FID\n"
	  "  --value V           the value (CDW11)\n"
	  "  --save              keep it across resets\n"
	  "  --nsid N, -n N      namespace\n",
	  CLI_O_FEAT },
	{ "resv-register", cmd_resv_register, " --nrkey KEY [--crkey KEY] [--action A] [--cptpl P]",
	  "register, unregister or replace a reservation key",
	  RESV_HELP "  --nrkey KEY         new reservation key\n"
		    "  --action A, --rrega A  0 register, 1 unregister, 2 replace\n"
		    "  --cptpl P, -p P     persist through power loss: 0 no change, 2 off, 3 on\n",
	  CLI_O_RESV },
	{ "resv-acquire", cmd_resv_acquire, " --crkey KEY --rtype T [--action A]",
	  "acquire or preempt a reservation",
	  RESV_HELP "  --prkey KEY         the key to preempt\n"
		    "  --rtype T, -t T     1 write exclusive, 2 exclusive access, 3/4 ... "
		    "registrants "
		    "only, 5/6 ... all registrants\n"
		    "  --action A, --racqa A  0 acquire, 1 preempt, 2 preempt and abort\n",
	  CLI_O_RESV },
	{ "resv-release", cmd_resv_release, " --crkey KEY --rtype T [--action A]",
	  "release or clear a reservation",
	  RESV_HELP "  --rtype T, -t T     the reservation's type\n"
		    "  --action A, --rrela A  0 release, 1 clear\n",
	  CLI_O_RESV },
	{ "resv-report", cmd_resv_report, "", "the reservation status and its registrants", "", 0 },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char common_help[] =
	"  -o, --output-format FMT  normal or json (--json: the same as -o json)\n"
	"  --hostnqn NQN       host NQN (default: /etc/nvme/hostnqn or a generated one)\n"
	"  --hostid UUID       host identifier (default: /etc/nvme/hostid or generated)\n"
	"  --hdgst             ask for NVMe/TCP header digests\n"
	"  --ddgst             ask for NVMe/TCP data digests\n"
	"  --tls               NVMe/TCP over TLS 1.3 with the host's PSK (--tls-key or\n"
	"                      --tls-key-file)\n"
	"  --tls-key KEY       the PSK in interchange format, NVMeTLSkey-1:HH:...: as\n"
	"                      nvme gen-tls-key writes it (implies --tls; --tls_key too)\n"
	"  --tls-key-file PATH the same from a file of mode 0600 (implies --tls)\n"
	"  --tls-identity N    PSK identity version: 1 (default, with PSK digest) or 0\n"
	"  --timeout MS        connect and command timeout (default 10000 / 30000)\n"
	"  --kato MS           keep alive timeout (default 30000, 0 = none)\n"
	"  --reconnect-delay S seconds between reconnect attempts (default 2)\n"
	"  --ctrl-loss-tmo S   stop reconnecting after S seconds, -1 never (default 600)\n"
	"  --fast-io-fail-tmo S fail held I/O after S seconds of outage (default off)\n"
	"  -S, --dhchap-secret KEY   DH-HMAC-CHAP host secret (DHHC-1:NN:...:, or a 0600 file)\n"
	"  -C, --dhchap-ctrl-secret KEY  controller secret: authenticate it too\n"
	"  -v, --verbose       more messages (twice: debug)\n"
	"  -h, --help          this help\n";

static void usage(FILE *f)
{
	fprintf(f, "Usage: nvmeof COMMAND URI [OPTIONS]\n\n"
		   "URI: nvme+tcp://HOST[:PORT][/SUBSYS-NQN[/NSID]]\n"
		   "     nvme+rdma://HOST[:PORT][/SUBSYS-NQN[/NSID]] (NVMe/RDMA, when built in)\n"
		   "     iscsi://[USER%%SECRET@]HOST[:PORT]/TARGET-IQN/LUN (SCSI over iSCSI)\n"
		   "     iscsi://HOST[:PORT] (discover: the portal's SendTargets list)\n"
		   "     (no NQN: the discovery controller, port 8009; otherwise port 4420)\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].about);
	fprintf(f, "\nRun 'nvmeof COMMAND --help' for a command's options.\n"
		   "Exit status: 0 success, 1 NVMe error status, 2 usage or URI error,\n"
		   "3 connection or transport failure.\n");
}

static void command_help(const struct command *cmd)
{
	printf("Usage: nvmeof %s URI%s [OPTIONS]\n\n%s.\n\nOptions:\n%s%s", cmd->name, cmd->args,
	       cmd->about, cmd->extra, common_help);
}

static uint64_t parse_u64(struct cli *c, const char *opt, const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!*s || *s == '-')
		die_usage(c, "%s: '%s' is not a number", opt, s);
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		die_usage(c, "%s: '%s' is not a number in 0-%" PRIu64, opt, s, max);
	return v;
}

enum {
	OPT_HOSTNQN = 256,
	OPT_HOSTID,
	OPT_HDGST,
	OPT_DDGST,
	OPT_TLS,
	OPT_TLS_KEY,
	OPT_TLS_KEY_FILE,
	OPT_TLS_IDENTITY,
	OPT_TIMEOUT,
	OPT_KATO,
	OPT_DHCHAP_SECRET,
	OPT_DHCHAP_CTRL_SECRET,
	OPT_RECONNECT_DELAY,
	OPT_CTRL_LOSS_TMO,
	OPT_FAST_IO_FAIL_TMO,
	OPT_JSON,
	OPT_LBA,
	OPT_BLOCKS,
	OPT_FUA,
	OPT_OUTPUT,
	OPT_LOG_ID,
	OPT_LOG_LEN,
	OPT_NSID,
	OPT_FID,
	OPT_VALUE,
	OPT_SEL,
	OPT_SAVE,
	OPT_CRKEY,
	OPT_NRKEY,
	OPT_PRKEY,
	OPT_RTYPE,
	OPT_ACTION,
	OPT_IEKEY,
	OPT_CPTPL,
	OPT_AD,
};

/* The option @opt is one of @cmd's, or usage. */
static void needs(const struct cli *c, const struct command *cmd, unsigned int what,
		  const char *opt)
{
	if (!(cmd->uses & what))
		die_usage(c, "%s is not an option of this command", opt);
}

/*
 * A DH-HMAC-CHAP secret: the DHHC-1 text itself, as nvme connect takes it (then wiped
 * from the argument list so that ps shows it no longer), or else the path of a file
 * whose first line is the text, readable by its owner only (common/key_file.h).
 */
static void take_secret(struct cli *c, const char *opt, char *arg, char *buf, size_t len,
			const char **out)
{
	char err[320];

	if (strncmp(arg, "DHHC-1:", 7) == 0) {
		size_t n = strlen(arg);

		if (n >= len)
			die_usage(c, "%s: too long for a DH-HMAC-CHAP secret", opt);
		memcpy(buf, arg, n + 1);
		explicit_bzero(arg, n);
	} else if (nvme_key_file_read(arg, buf, len, err, sizeof(err)) < 0) {
		die_usage(c, "%s: %s", opt, err);
	}
	*out = buf;
}

static void parse_args(struct cli *c, const struct command *cmd, int argc, char **argv)
{
	static const struct option all[] = {
		{ "hostnqn", required_argument, NULL, OPT_HOSTNQN },
		{ "hostid", required_argument, NULL, OPT_HOSTID },
		{ "hdgst", no_argument, NULL, OPT_HDGST },
		{ "ddgst", no_argument, NULL, OPT_DDGST },
		{ "tls", no_argument, NULL, OPT_TLS },
		{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
		{ "tls_key", required_argument, NULL, OPT_TLS_KEY },
		{ "tls-key-file", required_argument, NULL, OPT_TLS_KEY_FILE },
		{ "tls-identity", required_argument, NULL, OPT_TLS_IDENTITY },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "kato", required_argument, NULL, OPT_KATO },
		{ "dhchap-secret", required_argument, NULL, OPT_DHCHAP_SECRET },
		{ "dhchap-ctrl-secret", required_argument, NULL, OPT_DHCHAP_CTRL_SECRET },
		{ "reconnect-delay", required_argument, NULL, OPT_RECONNECT_DELAY },
		{ "ctrl-loss-tmo", required_argument, NULL, OPT_CTRL_LOSS_TMO },
		{ "fast-io-fail-tmo", required_argument, NULL, OPT_FAST_IO_FAIL_TMO },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output-format", required_argument, NULL, 'o' },
		{ "lba", required_argument, NULL, OPT_LBA },
		{ "start-block", required_argument, NULL, OPT_LBA },
		{ "blocks", required_argument, NULL, OPT_BLOCKS },
		{ "data", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "input", required_argument, NULL, 'i' },
		{ "fua", no_argument, NULL, OPT_FUA },
		{ "force-unit-access", no_argument, NULL, OPT_FUA },
		{ "log-id", required_argument, NULL, OPT_LOG_ID },
		{ "log-len", required_argument, NULL, OPT_LOG_LEN },
		{ "nsid", required_argument, NULL, OPT_NSID },
		{ "namespace-id", required_argument, NULL, OPT_NSID },
		{ "feature-id", required_argument, NULL, OPT_FID },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "sel", required_argument, NULL, OPT_SEL },
		{ "save", no_argument, NULL, OPT_SAVE },
		{ "crkey", required_argument, NULL, OPT_CRKEY },
		{ "nrkey", required_argument, NULL, OPT_NRKEY },
		{ "prkey", required_argument, NULL, OPT_PRKEY },
		{ "rtype", required_argument, NULL, OPT_RTYPE },
		{ "action", required_argument, NULL, OPT_ACTION },
		{ "rrega", required_argument, NULL, OPT_ACTION },
		{ "racqa", required_argument, NULL, OPT_ACTION },
		{ "rrela", required_argument, NULL, OPT_ACTION },
		{ "iekey", no_argument, NULL, OPT_IEKEY },
		{ "cptpl", required_argument, NULL, OPT_CPTPL },
		{ "ad", no_argument, NULL, OPT_AD },
		{ NULL, 0, NULL, 0 },
	};
	bool is_log = cmd->run == cmd_get_log;
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":vhVo:i:d:s:n:l:f:t:p:S:C:", all, NULL)) != -1) {
		switch (opt) {
		case OPT_HOSTNQN:
			c->opts.hostnqn = optarg;
			break;
		case OPT_HOSTID:
			c->opts.hostid = optarg;
			break;
		case OPT_HDGST:
			c->opts.hdgst = true;
			break;
		case OPT_DDGST:
			c->opts.ddgst = true;
			break;
		case OPT_TLS:
			c->opts.tls = true;
			break;
		case OPT_TLS_KEY:
			c->opts.tls = true;
			c->opts.tls_key = optarg;
			break;
		case OPT_TLS_KEY_FILE:
			c->opts.tls = true;
			c->opts.tls_key_file = optarg;
			break;
		case OPT_TLS_IDENTITY:
			c->opts.tls_identity = (int)parse_u64(c, "--tls-identity", optarg, 1);
			break;
		case OPT_TIMEOUT:
			c->opts.connect_timeout_ms = c->opts.admin_timeout_ms =
				c->opts.io_timeout_ms =
					(unsigned int)parse_u64(c, "--timeout", optarg, 3600000);
			if (!c->opts.connect_timeout_ms)
				die_usage(c, "--timeout must be at least 1");
			break;
		case OPT_KATO:
			c->opts.kato_ms = (unsigned int)parse_u64(c, "--kato", optarg, 3600000);
			break;
		case 'S':
		case OPT_DHCHAP_SECRET:
			take_secret(c, "--dhchap-secret", optarg, c->dhchap_secret,
				    sizeof(c->dhchap_secret), &c->opts.dhchap_secret);
			break;
		case 'C':
		case OPT_DHCHAP_CTRL_SECRET:
			take_secret(c, "--dhchap-ctrl-secret", optarg, c->dhchap_ctrl_secret,
				    sizeof(c->dhchap_ctrl_secret), &c->opts.dhchap_ctrl_secret);
			break;
		case OPT_RECONNECT_DELAY:
			c->opts.reconnect_delay =
				(int)parse_u64(c, "--reconnect-delay", optarg, 86400);
			break;
		case OPT_CTRL_LOSS_TMO:
			c->opts.ctrl_loss_tmo =
				strcmp(optarg, "-1") == 0
					? -1
					: (int)parse_u64(c, "--ctrl-loss-tmo", optarg, 86400 * 365);
			break;
		case OPT_FAST_IO_FAIL_TMO:
			c->opts.fast_io_fail_tmo = strcmp(optarg, "-1") == 0
							   ? -1
							   : (int)parse_u64(c, "--fast-io-fail-tmo",
									    optarg, 86400 * 365);
			break;
		case 'v':
			c->verbose++;
			break;
		case 'h':
			command_help(cmd);
			exit(0);
		case 'V':
			printf("nvmeof %s\n", PACKAGE_VERSION);
			exit(0);
		case OPT_JSON:
			c->json = true;
			break;
		case 'o':
			if (!strcmp(optarg, "json"))
				c->json = true;
			else if (!strcmp(optarg, "normal"))
				c->json = false;
			else if (cmd->uses & CLI_O_OUT)
				c->file = optarg; /* read -o FILE, as before -d */
			else
				die_usage(c, "-o: bad value '%s': normal or json", optarg);
			break;
		case 's':
			if (cmd->uses & CLI_O_FEAT) {
				c->sel = (uint8_t)parse_u64(c, "--sel", optarg, 3);
				break;
			}
			/* -s is --start-block */
			__attribute__((fallthrough));
		case OPT_LBA:
			needs(c, cmd, CLI_O_LBA, "--lba");
			c->lba = parse_u64(c, "--lba", optarg, UINT64_MAX);
			c->have_lba = true;
			break;
		case OPT_BLOCKS:
			needs(c, cmd, CLI_O_LBA, "--blocks");
			c->blocks = parse_u64(c, "--blocks", optarg, UINT32_MAX);
			c->have_blocks = true;
			break;
		case 'i':
			if (is_log) {
				c->log_id = optarg;
				break;
			}
			needs(c, cmd, CLI_O_IN, "-i");
			c->file = optarg;
			break;
		case 'd':
			needs(c, cmd, CLI_O_IN | CLI_O_OUT, "-d");
			c->file = optarg;
			break;
		case OPT_OUTPUT:
			needs(c, cmd, CLI_O_OUT, "--output");
			c->file = optarg;
			break;
		case OPT_FUA:
			needs(c, cmd, CLI_O_FUA, "--fua");
			c->fua = true;
			break;
		case OPT_LOG_ID:
			needs(c, cmd, CLI_O_LOG, "--log-id");
			c->log_id = optarg;
			break;
		case 'l':
		case OPT_LOG_LEN:
			needs(c, cmd, CLI_O_LOG, "--log-len");
			c->log_len = (uint32_t)parse_u64(c, "--log-len", optarg, 1u << 20);
			break;
		case 'n':
		case OPT_NSID:
			needs(c, cmd, CLI_O_LOG | CLI_O_FEAT, "--nsid");
			c->nsid = (uint32_t)parse_u64(c, "--nsid", optarg, UINT32_MAX);
			break;
		case 'f':
		case OPT_FID:
			needs(c, cmd, CLI_O_FEAT, "--feature-id");
			c->fid = (uint8_t)parse_u64(c, "--feature-id", optarg, 255);
			c->have_fid = true;
			break;
		case OPT_VALUE:
			needs(c, cmd, CLI_O_FEAT, "--value");
			c->value = (uint32_t)parse_u64(c, "--value", optarg, UINT32_MAX);
			c->have_value = true;
			break;
		case OPT_SEL:
			needs(c, cmd, CLI_O_FEAT, "--sel");
			c->sel = (uint8_t)parse_u64(c, "--sel", optarg, 3);
			break;
		case OPT_SAVE:
			needs(c, cmd, CLI_O_FEAT, "--save");
			c->save = true;
			break;
		case OPT_CRKEY:
			needs(c, cmd, CLI_O_RESV, "--crkey");
			c->crkey = parse_u64(c, "--crkey", optarg, UINT64_MAX);
			break;
		case OPT_NRKEY:
			needs(c, cmd, CLI_O_RESV, "--nrkey");
			c->nrkey = parse_u64(c, "--nrkey", optarg, UINT64_MAX);
			break;
		case OPT_PRKEY:
			needs(c, cmd, CLI_O_RESV, "--prkey");
			c->prkey = parse_u64(c, "--prkey", optarg, UINT64_MAX);
			break;
		case 't':
		case OPT_RTYPE:
			needs(c, cmd, CLI_O_RESV, "--rtype");
			c->rtype = (uint8_t)parse_u64(c, "--rtype", optarg, 6);
			break;
		case OPT_ACTION:
			needs(c, cmd, CLI_O_RESV, "--action");
			c->action = (uint8_t)parse_u64(c, "--action", optarg, 7);
			break;
		case OPT_IEKEY:
			needs(c, cmd, CLI_O_RESV, "--iekey");
			c->iekey = true;
			break;
		case 'p':
		case OPT_CPTPL:
			needs(c, cmd, CLI_O_RESV, "--cptpl");
			c->cptpl = (uint8_t)parse_u64(c, "--cptpl", optarg, 3);
			if (c->cptpl == 1)
				die_usage(c, "--cptpl: 0 no change, 2 off, 3 on");
			break;
		case OPT_AD:
			needs(c, cmd, CLI_O_AD, "--ad");
			c->ad = true;
			break;
		case ':':
			die_usage(c, "option '%s' needs a value", argv[optind - 1]);
		default:
			die_usage(c, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die_usage(c, "missing URI");
	if (optind + 1 < argc)
		die_usage(c, "unexpected argument '%s'", argv[optind + 1]);
	c->uri = argv[optind];
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	const struct command *cmd = NULL;
	int rc;

	nvmeof_opts_init(&c.opts);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			for (size_t i = 0; i < NCOMMANDS; i++)
				if (!strcmp(argv[2], commands[i].name)) {
					command_help(&commands[i]);
					return 0;
				}
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("nvmeof %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "nvmeof: unknown command '%s' (see 'nvmeof --help')\n", argv[1]);
		return EXIT_USAGE;
	}
	c.cmd = cmd->name;
	parse_args(&c, cmd, argc - 1, argv + 1);
	if (c.verbose)
		nvmeof_set_log_fn(log_to_stderr, NULL,
				  c.verbose > 1 ? NVMEOF_LOG_DEBUG : NVMEOF_LOG_INFO);
	rc = cmd->run(&c);
	explicit_bzero(c.dhchap_secret, sizeof(c.dhchap_secret));
	explicit_bzero(c.dhchap_ctrl_secret, sizeof(c.dhchap_ctrl_secret));
	return rc;
}
