/* SPDX-License-Identifier: MIT */
#include "cli_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/nvme_spec.h"
#include "iscsi/iscsi.h"
#include "core/nvmf.h"

enum {
	OPT_NS = 256,
	OPT_BLOCK_SIZE,
	OPT_NQN,
	OPT_LISTEN,
	OPT_DISCOVERY_PORT,
	OPT_ALLOW_HOST,
	OPT_TLS_PSK_FILE,
	OPT_REACTORS,
	OPT_PIN,
	OPT_NO_PIN,
	OPT_IN_CAPSULE,
	OPT_MAX_QD,
	OPT_MAX_IO,
	OPT_TCP_ZEROCOPY_MIN,
	OPT_LOG_LEVEL,
	OPT_PIDFILE,
	OPT_SYSLOG,
	OPT_STATS_SOCKET,
	OPT_METRICS,
	OPT_STATE_DIR,
	OPT_MAX_CONN,
	OPT_MAX_CONNECTING,
	OPT_MAX_HOST_CONN,
	OPT_R2T_TIMEOUT,
	OPT_CONNECT_TIMEOUT,
	OPT_LOGIN_TIMEOUT,
	OPT_UNSAFE_IGNORE_FLUSH,
	OPT_FOREGROUND,
	OPT_CONTROL_SOCKET,
	OPT_NO_CONTROL_SOCKET,
	OPT_CONTROL_GROUP,
	OPT_LOG_FILE,
	OPT_DHCHAP_KEY,
	OPT_DHCHAP_CTRL_KEY,
	OPT_DHCHAP_HASH,
	OPT_DHCHAP_DHGROUP,
	OPT_AUTH_TIMEOUT,
	OPT_AUTH_THREADS,
	OPT_AUTH_MAX_PENDING,
	OPT_AUTH_MAX_PENDING_HOST,
	OPT_AUTH_MAX_PENDING_ADDR,
	OPT_POLL,
	OPT_POLL_MAX_US,
	OPT_MAX_CONTROL_CONN,
	OPT_METRICS_TIMEOUT,
	OPT_METRICS_PER_ADDRESS,
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "ns", required_argument, NULL, OPT_NS },
	{ "block-size", required_argument, NULL, OPT_BLOCK_SIZE },
	{ "nqn", required_argument, NULL, OPT_NQN },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "discovery-port", required_argument, NULL, OPT_DISCOVERY_PORT },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "dhchap-key", required_argument, NULL, OPT_DHCHAP_KEY },
	{ "dhchap-ctrl-key", required_argument, NULL, OPT_DHCHAP_CTRL_KEY },
	{ "dhchap-hash", required_argument, NULL, OPT_DHCHAP_HASH },
	{ "dhchap-dhgroup", required_argument, NULL, OPT_DHCHAP_DHGROUP },
	{ "auth-timeout", required_argument, NULL, OPT_AUTH_TIMEOUT },
	{ "auth-threads", required_argument, NULL, OPT_AUTH_THREADS },
	{ "auth-max-pending", required_argument, NULL, OPT_AUTH_MAX_PENDING },
	{ "auth-max-pending-host", required_argument, NULL, OPT_AUTH_MAX_PENDING_HOST },
	{ "auth-max-pending-addr", required_argument, NULL, OPT_AUTH_MAX_PENDING_ADDR },
	{ "tls-psk-file", required_argument, NULL, OPT_TLS_PSK_FILE },
	{ "reactors", required_argument, NULL, OPT_REACTORS },
	{ "pin", no_argument, NULL, OPT_PIN },
	{ "no-pin", no_argument, NULL, OPT_NO_PIN },
	{ "poll", required_argument, NULL, OPT_POLL },
	{ "poll-max-us", required_argument, NULL, OPT_POLL_MAX_US },
	{ "in-capsule", required_argument, NULL, OPT_IN_CAPSULE },
	{ "max-queue-depth", required_argument, NULL, OPT_MAX_QD },
	{ "max-io-size", required_argument, NULL, OPT_MAX_IO },
	{ "tcp-zerocopy-min", required_argument, NULL, OPT_TCP_ZEROCOPY_MIN },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
	{ "max-connecting", required_argument, NULL, OPT_MAX_CONNECTING },
	{ "max-host-connections", required_argument, NULL, OPT_MAX_HOST_CONN },
	{ "r2t-timeout", required_argument, NULL, OPT_R2T_TIMEOUT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "login-timeout", required_argument, NULL, OPT_LOGIN_TIMEOUT },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "verbose", no_argument, NULL, 'v' },
	{ "daemon", no_argument, NULL, 'd' },
	{ "foreground", no_argument, NULL, OPT_FOREGROUND },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "syslog", no_argument, NULL, OPT_SYSLOG },
	{ "stats-socket", required_argument, NULL, OPT_STATS_SOCKET },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "control-socket", required_argument, NULL, OPT_CONTROL_SOCKET },
	{ "no-control-socket", no_argument, NULL, OPT_NO_CONTROL_SOCKET },
	{ "control-group", required_argument, NULL, OPT_CONTROL_GROUP },
	{ "max-control-connections", required_argument, NULL, OPT_MAX_CONTROL_CONN },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "metrics-timeout", required_argument, NULL, OPT_METRICS_TIMEOUT },
	{ "metrics-per-address", required_argument, NULL, OPT_METRICS_PER_ADDRESS },
	/* not in --help: for testing durability checks only */
	{ "unsafe-ignore-flush", no_argument, NULL, OPT_UNSAFE_IGNORE_FLUSH },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void cli_usage(FILE *f)
{
	fputs("Usage: nvmeof-target [OPTIONS]\n"
	      "Serve NVMe namespaces over NVMe/TCP and iSCSI. With no options: a 1 GiB RAM\n"
	      "namespace as " NVMF_DEFAULT_NQN " on " CLI_DEFAULT_LISTEN ",\n"
	      "the same namespace as LUN 0 of " ISCSI_DEFAULT_IQN " on\n" CLI_DEFAULT_ISCSI_LISTEN
	      ", and the discovery service on port 8009.\n"
	      "\n"
	      "Quick setup (one subsystem):\n"
	      "  --ns SPEC             namespace: ram:SIZE, null:SIZE, a file/block device\n"
	      "                        (O_DIRECT; PATH,buffered_io for the page cache) or\n"
	      "                        rbd:POOL/IMAGE[:id=NAME][:conf=PATH][:keyring=PATH]\n"
	      "                        (repeatable; default " CLI_DEFAULT_NS ")\n"
	      "  --block-size N        logical block size of the namespaces: 512 or 4096\n"
	      "  --nqn NQN             subsystem NQN (default " NVMF_DEFAULT_NQN ")\n"
	      "  --listen URI          tcp://, rdma:// or iscsi://ADDR[:PORT], IPv6 as [ADDR];\n"
	      "                        tls://ADDR[:PORT]: NVMe/TCP with TLS 1.3 required\n"
	      "                        (repeatable; default " CLI_DEFAULT_LISTEN "\n"
	      "                        and " CLI_DEFAULT_ISCSI_LISTEN ")\n"
	      "  --discovery-port N    discovery-only port on each TCP listen address\n"
	      "                        (default 8009, 0 = none)\n"
	      "  --allow-host NQN      accept only these host NQNs (repeatable; default any)\n"
	      "  --dhchap-key HOSTNQN=SECRET  the host must authenticate (DH-HMAC-CHAP) with\n"
	      "                        SECRET, a DHHC-1:NN:...: key as nvme gen-dhchap-key\n"
	      "                        prints, or HOSTNQN=/PATH, a file of mode 0600 holding\n"
	      "                        it (not visible to ps); also allows the host\n"
	      "                        (repeatable)\n"
	      "  --dhchap-ctrl-key HOSTNQN=SECRET  the controller's secret, for hosts that\n"
	      "                        authenticate it too (bidirectional; SECRET or /PATH)\n"
	      "  --dhchap-hash NAME    hmac(sha256), hmac(sha384) or hmac(sha512) (default: the\n"
	      "                        host's first choice)\n"
	      "  --dhchap-dhgroup NAME null, ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144 or\n"
	      "                        ffdhe8192 (default: the host's first choice)\n"
	      "  --tls-psk-file HOSTNQN=PATH  the TLS PSK of a host (NVMeTLSkey-1:HH:...: as\n"
	      "                        nvme gen-tls-key writes it) in a file of mode 0600\n"
	      "                        (repeatable)\n"
	      "  -c, --config FILE     nvmetcli-style JSON configuration instead of the above\n"
	      "\n"
	      "Tuning:\n"
	      "  --reactors N          I/O threads (default one per online CPU)\n"
	      "  --pin, --no-pin       pin reactor threads to CPUs (default: pin when there\n"
	      "                        is one reactor per CPU)\n"
	      "  --poll MODE           how reactors wait: adaptive (default: keep polling for\n"
	      "                        a window tuned to the gap between events, then sleep),\n"
	      "                        off (always sleep in epoll) or busy (never sleep)\n"
	      "  --poll-max-us US      adaptive polling window at most (default 100)\n"
	      "  --in-capsule BYTES    in-capsule data size of I/O queues (default 8192)\n"
	      "  --max-queue-depth N   entries per I/O queue (default 128)\n"
	      "  --max-io-size BYTES   largest transfer (MDTS; power of 2, default 128K)\n"
	      "  --tcp-zerocopy-min BYTES  NVMe/TCP: send read data with MSG_ZEROCOPY when a\n"
	      "                        send carries at least this much (0 = off, the default;\n"
	      "                        pays on real NICs from ~16K, loses on loopback)\n"
	      "  --max-connections N   connections through Connect at once, all ports (default\n"
	      "                        4096); more are closed\n"
	      "  --max-connecting N    connections not yet through ICReq and Connect (default\n"
	      "                        1024; NVMe/RDMA queues: CM request to Connect), counted\n"
	      "                        apart so that silent sockets cannot take the slots of\n"
	      "                        real hosts; more are closed after accept\n"
	      "  --max-host-connections N  queues one host NQN may have connected at once, all\n"
	      "                        its controllers (default 1024); its next Connect fails\n"
	      "  --r2t-timeout SECS    NVMe/TCP: the data an R2T asks for must arrive within\n"
	      "                        SECS (default 10; 0: no deadline), or the queue is\n"
	      "                        terminated\n"
	      "  --connect-timeout SECS  ICReq and Connect must be done within SECS (default 5;\n"
	      "                        0: no deadline; NVMe/RDMA: Connect); slower connections\n"
	      "                        are closed\n"
	      "  --auth-timeout SECS   a DH-HMAC-CHAP exchange must be done within SECS\n"
	      "                        (default 5; 0: no deadline); the queue is closed\n"
	      "  --auth-threads N      threads for DH-HMAC-CHAP's Diffie-Hellman work (1-64,\n"
	      "                        default 3; one is kept for re-authentications)\n"
	      "  --auth-max-pending N  DH jobs of queues not yet authenticated, queued or\n"
	      "                        running, in all (1-4096, default 128); more are refused\n"
	      "                        with AUTH_Failure1 (re-authentications never are)\n"
	      "  --auth-max-pending-host N  ... of one host NQN (default 16)\n"
	      "  --auth-max-pending-addr N  ... from one peer address (default 16)\n"
	      "  --login-timeout SECS  an iSCSI login, CHAP included, must reach the full\n"
	      "                        feature phase within SECS (default 5; 0: no deadline);\n"
	      "                        logins count against --max-connecting until then\n"
	      "\n"
	      "Running:\n"
	      "  --log-level LEVEL     err, warn, notice (default), info or debug\n"
	      "  -v, --verbose         one level more detail per -v\n"
	      "  -d, --daemon          detach; the start command exits once serving\n"
	      "  --foreground          stay in the foreground (the default; overrides -d)\n"
	      "  --pidfile FILE        write the daemon's PID to FILE\n"
	      "  --syslog              log to syslog instead of stderr\n"
	      "  --log-file PATH       append the log to PATH (reopened on SIGHUP); the default\n"
	      "                        with -d and no --syslog is " CLI_DEFAULT_LOG_FILE "\n"
	      "  --stats-socket PATH   serve counters (JSON lines) on a UNIX socket\n"
	      "  --metrics URI         Prometheus metrics over HTTP at tcp://ADDR:PORT/metrics\n"
	      "                        (port 0: a free one, logged)\n"
	      "  --metrics-timeout SECS  a metrics client must send a whole request within\n"
	      "                        SECS of connecting or of its previous reply (default 5)\n"
	      "  --metrics-per-address N  metrics connections from one address at once\n"
	      "                        (default 8, at most 64 in all); more are refused\n"
	      "  --state-dir DIR       namespace identities generated once, and reservations\n"
	      "                        that persist through power loss, are kept here\n"
	      "                        (created 0700; default " CLI_DEFAULT_STATE_DIR ")\n"
	      "  --control-socket PATH JSON-RPC control socket for nvmeof-ctl (default\n"
	      "                        /run/nvmeof/nvmeof-target.sock)\n"
	      "  --no-control-socket   no control socket\n"
	      "  --control-group NAME  members of group NAME may use the control socket\n"
	      "                        (otherwise root and the daemon's own user only)\n"
	      "  --max-control-connections N  control socket clients at once (default 16);\n"
	      "                        more are refused\n"
	      "  -h, --help            this text\n"
	      "  -V, --version         print the version\n"
	      "\n"
	      "SIGINT/SIGTERM stop the target cleanly; SIGHUP reloads the -c file (replacing\n"
	      "live changes not saved to it) and reopens the --log-file.\n",
	      f);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Decimal integer in [min, max]. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Bytes: decimal with an optional K, M or G suffix (powers of 1024); 0 allowed. */
static int parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static bool nqn_ok(const char *nqn)
{
	size_t len = strlen(nqn);

	if (len < 5 || len > NVME_NQN_MAX || strncmp(nqn, "nqn.", 4) != 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)nqn[i] <= ' ' || (unsigned char)nqn[i] >= 0x7f)
			return false;
	return true;
}

static const char *const level_names[] = { "err", "warn", "notice", "info", "debug" };

static int parse_level(const char *s)
{
	for (int i = 0; i < (int)(sizeof(level_names) / sizeof(level_names[0])); i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	if (strcmp(s, "error") == 0)
		return LOG_LVL_ERR;
	if (strcmp(s, "warning") == 0)
		return LOG_LVL_WARN;
	return -1;
}

/* --dhchap-key / --dhchap-ctrl-key HOSTNQN=SECRET: the secret itself is never echoed. */
static int dhchap_opt(struct cli_opts *o, bool ctrl, const char *arg, char *err, size_t errlen)
{
	const char *flag = ctrl ? "--dhchap-ctrl-key" : "--dhchap-key";
	const char *eq = strchr(arg, '=');
	char nqn[NVME_NQN_FIELD];
	struct cli_dhchap *d = NULL;
	size_t n = eq ? (size_t)(eq - arg) : 0;

	if (!eq || !n || n >= sizeof(nqn))
		return fail(err, errlen, "%s: expected HOSTNQN=SECRET or HOSTNQN=/PATH", flag);
	memcpy(nqn, arg, n);
	nqn[n] = '\0';
	if (!nqn_ok(nqn))
		return fail(err, errlen, "%s: '%s' is not a host NQN", flag, nqn);
	if (strncmp(eq + 1, "DHHC-1:", 7) && eq[1] != '/')
		return fail(err, errlen,
			    "%s %s=...: expected a DHHC-1:NN:...: secret or the absolute path "
			    "of a file holding one",
			    flag, nqn);
	for (unsigned int i = 0; i < o->ndhchap; i++)
		if (!strcmp(o->dhchap[i].hostnqn, nqn))
			d = &o->dhchap[i];
	if (!d) {
		if (o->ndhchap == CLI_MAX_HOSTS)
			return fail(err, errlen, "%s: at most %d hosts", flag, CLI_MAX_HOSTS);
		d = &o->dhchap[o->ndhchap++];
		snprintf(d->hostnqn, sizeof(d->hostnqn), "%s", nqn);
	}
	if (ctrl ? d->ctrl_key : d->key)
		return fail(err, errlen, "%s %s: given twice", flag, nqn);
	if (ctrl)
		d->ctrl_key = eq + 1;
	else
		d->key = eq + 1;
	return 0;
}

static int one_opt(int c, const char *arg, const char *name, struct cli_opts *o, int *verbose,
		   char *err, size_t errlen)
{
	unsigned long v;
	uint64_t bytes;
	char uerr[256];

	switch (c) {
	case 'c':
		o->config = arg;
		return 0;
	case OPT_NS:
		if (o->nns == CLI_MAX_NS)
			return fail(err, errlen, "--ns: at most %d namespaces", CLI_MAX_NS);
		if (!*arg)
			return fail(err, errlen, "--ns: empty namespace spec");
		o->ns[o->nns++] = arg;
		return 0;
	case OPT_BLOCK_SIZE:
		if (parse_uint(arg, 512, 4096, &v) || (v != 512 && v != 4096))
			return fail(err, errlen, "--block-size: expected 512 or 4096, got '%s'",
				    arg);
		o->block_size = (uint32_t)v;
		return 0;
	case OPT_NQN:
		if (!nqn_ok(arg))
			return fail(err, errlen,
				    "--nqn: '%s' is not an NQN (nqn.YYYY-MM.reverse.domain:name, "
				    "at most %d characters)",
				    arg, NVME_NQN_MAX);
		o->nqn = arg;
		return 0;
	case OPT_LISTEN:
		if (o->nlisten == CLI_MAX_LISTEN)
			return fail(err, errlen, "--listen: at most %d listeners", CLI_MAX_LISTEN);
		if (uri_parse_listen(arg, &o->listen[o->nlisten], uerr, sizeof(uerr)) != 0)
			return fail(err, errlen, "--listen: %s", uerr);
		o->nlisten++;
		return 0;
	case OPT_DISCOVERY_PORT:
		if (parse_uint(arg, 0, 65535, &v))
			return fail(err, errlen, "--discovery-port: expected 0-65535, got '%s'",
				    arg);
		o->discovery_port = (unsigned int)v;
		return 0;
	case OPT_ALLOW_HOST:
		if (o->nhosts == CLI_MAX_HOSTS)
			return fail(err, errlen, "--allow-host: at most %d hosts", CLI_MAX_HOSTS);
		if (!nqn_ok(arg))
			return fail(err, errlen, "--allow-host: '%s' is not a host NQN", arg);
		o->hosts[o->nhosts++] = arg;
		return 0;
	case OPT_DHCHAP_KEY:
	case OPT_DHCHAP_CTRL_KEY:
		return dhchap_opt(o, c == OPT_DHCHAP_CTRL_KEY, arg, err, errlen);
	case OPT_DHCHAP_HASH:
		if (strcmp(arg, "hmac(sha256)") && strcmp(arg, "hmac(sha384)") &&
		    strcmp(arg, "hmac(sha512)"))
			return fail(err, errlen,
				    "--dhchap-hash: expected hmac(sha256), hmac(sha384) or "
				    "hmac(sha512), got '%s'",
				    arg);
		o->dhchap_hash = arg;
		return 0;
	case OPT_DHCHAP_DHGROUP:
		if (strcmp(arg, "null") && (strncmp(arg, "ffdhe", 5) ||
					    (strcmp(arg + 5, "2048") && strcmp(arg + 5, "3072") &&
					     strcmp(arg + 5, "4096") && strcmp(arg + 5, "6144") &&
					     strcmp(arg + 5, "8192"))))
			return fail(err, errlen,
				    "--dhchap-dhgroup: expected null or ffdhe2048, ffdhe3072, "
				    "ffdhe4096, ffdhe6144, ffdhe8192, got '%s'",
				    arg);
		o->dhchap_dhgroup = arg;
		return 0;
	case OPT_AUTH_TIMEOUT:
		if (parse_uint(arg, 0, 600, &v))
			return fail(err, errlen, "--auth-timeout: expected 0-600 seconds, got '%s'",
				    arg);
		o->auth_timeout_ms = (uint32_t)v * 1000;
		o->auth_timeout_set = true;
		return 0;
	case OPT_AUTH_THREADS:
		if (parse_uint(arg, 1, 64, &v))
			return fail(err, errlen, "--auth-threads: expected 1-64, got '%s'", arg);
		o->auth_threads = (uint32_t)v;
		return 0;
	case OPT_AUTH_MAX_PENDING:
	case OPT_AUTH_MAX_PENDING_HOST:
	case OPT_AUTH_MAX_PENDING_ADDR:
		if (parse_uint(arg, 1, 4096, &v))
			return fail(err, errlen, "--%s: expected 1-4096, got '%s'",
				    c == OPT_AUTH_MAX_PENDING        ? "auth-max-pending"
				    : c == OPT_AUTH_MAX_PENDING_HOST ? "auth-max-pending-host"
								     : "auth-max-pending-addr",
				    arg);
		*(c == OPT_AUTH_MAX_PENDING        ? &o->auth_max_pending
		  : c == OPT_AUTH_MAX_PENDING_HOST ? &o->auth_max_pending_host
						   : &o->auth_max_pending_addr) = (uint32_t)v;
		return 0;
	case OPT_TLS_PSK_FILE:
		if (o->ntls_psk_files == CLI_MAX_HOSTS)
			return fail(err, errlen, "--tls-psk-file: at most %d hosts", CLI_MAX_HOSTS);
		if (!strchr(arg, '=') || strchr(arg, '=') == arg || !strchr(arg, '=')[1])
			return fail(err, errlen, "--tls-psk-file: expected HOSTNQN=PATH, got '%s'",
				    arg);
		o->tls_psk_files[o->ntls_psk_files++] = arg;
		return 0;
	case OPT_REACTORS:
		if (parse_uint(arg, 1, 1024, &v))
			return fail(err, errlen, "--reactors: expected 1-1024, got '%s'", arg);
		o->reactors = (unsigned int)v;
		return 0;
	case OPT_PIN:
		o->pin = REACTOR_PIN_ON;
		return 0;
	case OPT_NO_PIN:
		o->pin = REACTOR_PIN_OFF;
		return 0;
	case OPT_POLL:
		if (strcmp(arg, "adaptive") == 0)
			o->poll = REACTOR_POLL_ADAPTIVE;
		else if (strcmp(arg, "off") == 0)
			o->poll = REACTOR_POLL_OFF;
		else if (strcmp(arg, "busy") == 0)
			o->poll = REACTOR_POLL_BUSY;
		else
			return fail(err, errlen, "--poll: expected adaptive, off or busy, got '%s'",
				    arg);
		return 0;
	case OPT_POLL_MAX_US:
		if (parse_uint(arg, 1, REACTOR_POLL_MAX_US, &v))
			return fail(err, errlen, "--poll-max-us: expected 1-%d, got '%s'",
				    REACTOR_POLL_MAX_US, arg);
		o->poll_max_us = (unsigned int)v;
		return 0;
	case OPT_IN_CAPSULE:
		if (parse_bytes(arg, &bytes) || bytes > 1024 * 1024 || bytes % 16)
			return fail(err, errlen,
				    "--in-capsule: expected a multiple of 16 up to 1M, got '%s'",
				    arg);
		o->in_capsule = (uint32_t)bytes;
		o->in_capsule_set = true;
		return 0;
	case OPT_TCP_ZEROCOPY_MIN:
		if (parse_bytes(arg, &bytes) || bytes > 64 * 1024 * 1024)
			return fail(err, errlen,
				    "--tcp-zerocopy-min: expected 0 (off) to 64M bytes, got '%s'",
				    arg);
		o->tcp_zerocopy_min = (uint32_t)bytes;
		o->tcp_zerocopy_set = true;
		return 0;
	case OPT_MAX_QD:
		if (parse_uint(arg, 2, 4096, &v))
			return fail(err, errlen, "--max-queue-depth: expected 2-4096, got '%s'",
				    arg);
		o->max_queue_depth = (uint32_t)v;
		return 0;
	case OPT_MAX_CONN:
		if (parse_uint(arg, 1, 1000000, &v))
			return fail(err, errlen, "--max-connections: expected 1-1000000, got '%s'",
				    arg);
		o->max_connections = (uint32_t)v;
		return 0;
	case OPT_MAX_CONNECTING:
		if (parse_uint(arg, 1, 1000000, &v))
			return fail(err, errlen, "--max-connecting: expected 1-1000000, got '%s'",
				    arg);
		o->max_connecting = (uint32_t)v;
		return 0;
	case OPT_MAX_HOST_CONN:
		if (parse_uint(arg, 1, 1000000, &v))
			return fail(err, errlen,
				    "--max-host-connections: expected 1-1000000, got '%s'", arg);
		o->max_host_connections = (uint32_t)v;
		return 0;
	case OPT_R2T_TIMEOUT:
		if (parse_uint(arg, 0, 3600, &v))
			return fail(err, errlen, "--r2t-timeout: expected 0-3600 seconds, got '%s'",
				    arg);
		o->r2t_timeout_ms = (uint32_t)v * 1000;
		o->r2t_timeout_set = true;
		return 0;
	case OPT_CONNECT_TIMEOUT:
		if (parse_uint(arg, 0, 3600, &v))
			return fail(err, errlen,
				    "--connect-timeout: expected 0-3600 seconds, got '%s'", arg);
		o->connect_timeout_ms = (uint32_t)v * 1000;
		o->connect_timeout_set = true;
		return 0;
	case OPT_LOGIN_TIMEOUT:
		if (parse_uint(arg, 0, 3600, &v))
			return fail(err, errlen,
				    "--login-timeout: expected 0-3600 seconds, got '%s'", arg);
		o->login_timeout_ms = (uint32_t)v * 1000;
		o->login_timeout_set = true;
		return 0;
	case OPT_MAX_IO:
		if (parse_bytes(arg, &bytes) || bytes < 4096 || bytes > 4 * 1024 * 1024 ||
		    (bytes & (bytes - 1)))
			return fail(err, errlen,
				    "--max-io-size: expected a power of 2 from 4K to 4M, got '%s'",
				    arg);
		o->max_io_size = (uint32_t)bytes;
		return 0;
	case OPT_LOG_LEVEL:
		o->log_level = parse_level(arg);
		if (o->log_level < 0)
			return fail(err, errlen,
				    "--log-level: expected err, warn, notice, info or debug, got "
				    "'%s'",
				    arg);
		return 0;
	case 'v':
		(*verbose)++;
		return 0;
	case 'd':
		o->daemon = true;
		return 0;
	case OPT_FOREGROUND:
		o->daemon = false;
		return 0;
	case OPT_PIDFILE:
		if (!*arg)
			return fail(err, errlen, "--pidfile: empty path");
		o->pidfile = arg;
		return 0;
	case OPT_SYSLOG:
		o->syslog = true;
		return 0;
	case OPT_STATE_DIR:
		if (!*arg)
			return fail(err, errlen, "--state-dir: empty path");
		o->state_dir = arg;
		return 0;
	case OPT_STATS_SOCKET:
		if (!*arg)
			return fail(err, errlen, "--stats-socket: empty path");
		o->stats_socket = arg;
		return 0;
	case OPT_CONTROL_SOCKET:
		if (*arg != '/')
			return fail(err, errlen,
				    "--control-socket: expected an absolute path, got '%s'", arg);
		o->control_socket = arg;
		return 0;
	case OPT_NO_CONTROL_SOCKET:
		o->no_control_socket = true;
		return 0;
	case OPT_CONTROL_GROUP:
		if (!*arg)
			return fail(err, errlen, "--control-group: empty group name");
		o->control_group = arg;
		return 0;
	case OPT_LOG_FILE:
		if (*arg != '/')
			return fail(err, errlen, "--log-file: expected an absolute path, got '%s'",
				    arg);
		o->log_file = arg;
		return 0;
	case OPT_METRICS:
		if (!*arg)
			return fail(err, errlen, "--metrics: empty URI");
		o->metrics = arg;
		return 0;
	case OPT_MAX_CONTROL_CONN:
		if (parse_uint(arg, 1, 1024, &v))
			return fail(err, errlen,
				    "--max-control-connections: expected 1-1024, got '%s'", arg);
		o->max_control_connections = (uint32_t)v;
		return 0;
	case OPT_METRICS_TIMEOUT:
		if (parse_uint(arg, 1, 600, &v))
			return fail(err, errlen,
				    "--metrics-timeout: expected 1-600 seconds, got '%s'", arg);
		o->metrics_timeout_ms = (uint32_t)v * 1000;
		return 0;
	case OPT_METRICS_PER_ADDRESS:
		if (parse_uint(arg, 1, 64, &v))
			return fail(err, errlen, "--metrics-per-address: expected 1-64, got '%s'",
				    arg);
		o->metrics_per_address = (uint32_t)v;
		return 0;
	case OPT_UNSAFE_IGNORE_FLUSH:
		o->unsafe_ignore_flush = true;
		return 0;
	case 'h':
		o->help = true;
		return 0;
	case 'V':
		o->version = true;
		return 0;
	default:
		return fail(err, errlen, "%s: unknown option (see --help)", name);
	}
}

/* The long name of a quick-setup flag, for the message refusing it beside -c. */
static const char *quick_flag(int c)
{
	for (const struct option *l = long_opts; l->name; l++)
		if (l->val == c)
			return l->name;
	return "?";
}

int cli_parse(int argc, char **argv, struct cli_opts *o, char *err, size_t errlen)
{
	int verbose = 0, c, rc;
	const char *quick = NULL; /* the first quick flag that a file would contradict */

	memset(o, 0, sizeof(*o));
	o->discovery_port = 8009;
	o->log_level = -1;
	o->pin = REACTOR_PIN_AUTO;
	o->poll = REACTOR_POLL_ADAPTIVE;

	optind = 0; /* glibc: full reset, so the parser can run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:vdhV", long_opts, NULL)) != -1) {
		const char *name = argv[optind - 1];

		if (c == '?') {
			if (optopt)
				return fail(err, errlen, "-%c: unknown option (see --help)",
					    optopt);
			return fail(err, errlen, "%s: unknown option (see --help)", name);
		}
		if (c == ':') {
			if (optopt && optopt < 256)
				return fail(err, errlen, "-%c: missing argument", optopt);
			return fail(err, errlen, "%s: missing argument", name);
		}
		rc = one_opt(c, optarg, name, o, &verbose, err, errlen);
		if (rc)
			return rc;
		/* --discovery-port 0 (none) and 8009 (the default) also make sense with -c */
		if ((c == OPT_NS || c == OPT_BLOCK_SIZE || c == OPT_NQN || c == OPT_LISTEN ||
		     c == OPT_ALLOW_HOST || c == OPT_DHCHAP_KEY || c == OPT_DHCHAP_CTRL_KEY ||
		     c == OPT_DHCHAP_HASH || c == OPT_DHCHAP_DHGROUP || c == OPT_TLS_PSK_FILE ||
		     (c == OPT_DISCOVERY_PORT && o->discovery_port && o->discovery_port != 8009)) &&
		    !quick)
			quick = quick_flag(c);
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
	if (o->help || o->version)
		return 0;
	if (o->log_file && o->syslog)
		return fail(err, errlen, "--log-file and --syslog: pick one");
	if (o->control_socket && o->no_control_socket)
		return fail(err, errlen, "--control-socket and --no-control-socket: pick one");
	if (o->config && quick)
		return fail(err, errlen,
			    "-c %s and --%s conflict: the file sets what --%s would (drop one)",
			    o->config, quick, quick);
	if (verbose) {
		int base = o->log_level >= 0 ? o->log_level : LOG_LVL_NOTICE;

		o->log_level = base + verbose > LOG_LVL_DEBUG ? LOG_LVL_DEBUG : base + verbose;
	}
	if (o->config)
		return 0;
	for (unsigned int i = 0; i < o->ndhchap; i++)
		if (!o->dhchap[i].key)
			return fail(err, errlen,
				    "--dhchap-ctrl-key %s: needs --dhchap-key %s=... too",
				    o->dhchap[i].hostnqn, o->dhchap[i].hostnqn);

	if (!o->nns)
		o->ns[o->nns++] = CLI_DEFAULT_NS;
	if (!o->nqn)
		o->nqn = NVMF_DEFAULT_NQN;
	if (!o->nlisten) {
		uri_parse_listen(CLI_DEFAULT_LISTEN, &o->listen[o->nlisten++], NULL, 0);
		uri_parse_listen(CLI_DEFAULT_ISCSI_LISTEN, &o->listen[o->nlisten++], NULL, 0);
	}
	return 0;
}
