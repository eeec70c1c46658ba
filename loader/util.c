// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "util.h"

int verbose;

/* systemd sets JOURNAL_STREAM to the device and inode of the stream it
 * connected stdout/stderr to; a match means stderr is the journal (not
 * a pipe or file the daemon's output was later redirected to). */
static bool stderr_is_journal(void)
{
	static int known = -1;
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (known >= 0)
		return known;
	known = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 && !fstat(2, &st) &&
		st.st_dev == dev && st.st_ino == ino;
	return known;
}

/* LEVEL: syslog's (3 err, 4 warning, 5 notice, 6 info). */
/* The last messages, for the status page (log_recent()). */
#define LOG_RING	32
static struct { time_t at; int level; char text[200]; } ring[LOG_RING];
static unsigned int ring_next;

static void ring_put(int level, const char *prefix, const char *fmt, va_list ap)
{
	int o;

	ring[ring_next % LOG_RING].at = time(NULL);
	ring[ring_next % LOG_RING].level = level;
	o = snprintf(ring[ring_next % LOG_RING].text, sizeof(ring[0].text), "%s", prefix);
	vsnprintf(ring[ring_next % LOG_RING].text + o, sizeof(ring[0].text) - o, fmt, ap);
	ring_next++;
}

int log_recent(int i, time_t *at, int *level, const char **text)
{
	unsigned int n = ring_next < LOG_RING ? ring_next : LOG_RING;

	if (i < 0 || (unsigned int)i >= n)
		return -1;
	i = (ring_next - n + i) % LOG_RING;
	*at = ring[i].at;
	*level = ring[i].level;
	*text = ring[i].text;
	return 0;
}

static void vlog(int level, const char *prefix, const char *fmt, va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	if (level < 6)	/* (info, -v's, stays out: the page shows what the journal has) */
		ring_put(level, prefix, fmt, copy);
	va_end(copy);
	if (stderr_is_journal())
		fprintf(stderr, "<%d>%s", level, prefix);
	else
		fprintf(stderr, "sluice: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(3, "", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(4, "warning: ", fmt, ap);
	va_end(ap);
}

void log_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(5, "", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog(6, "", fmt, ap);
	va_end(ap);
}

void service_notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	char msg[256];
	va_list ap;
	int fd;

	/* a path, or an abstract name written with a leading '@' */
	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(sa.sun_path, path, strlen(path));
	if (path[0] == '@')
		sa.sun_path[0] = 0;
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		log_info("NOTIFY_SOCKET %s: %m", path);
	close(fd);
}

int fmt_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Start of the line before the one starting at P (LOG's start at most). */
static const char *line_before(const char *log, const char *p)
{
	if (p > log)
		p--;			/* the newline ending the previous line */
	while (p > log && p[-1] != '\n')
		p--;
	return p;
}

int verifier_reason(const char *log, char *reason, size_t len, int context,
		    const char **ctx, size_t *ctx_len)
{
	const char *end = NULL, *p, *start;

	for (p = strstr(log, "processed "); p; p = strstr(p + 1, "processed "))
		if (p == log || p[-1] == '\n')
			end = p;
	if (!end)
		return -1;
	start = end;
	do		/* skip blank lines back to the reason */
		start = line_before(log, start);
	while (start > log && *start == '\n');
	if (start == end || *start == '\n')	/* the log was cut before its reason */
		return -1;
	snprintf(reason, len, "%.*s", (int)strcspn(start, "\n"), start);
	*ctx = start;
	while (context-- > 0 && *ctx > log)
		*ctx = line_before(log, *ctx);
	*ctx_len = start - *ctx;
	return 0;
}

void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The whole of PATH, NUL-terminated (malloc'd), or NULL with errno. */
char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = (cap ? cap * 2 : 8192));

			if (!b) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = b;
		}
		r = fread(buf + n, 1, 4096, f);
		n += r;
	} while (r);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* TEXT into FD, the temporary file TMP, then TMP renamed over PATH. */
static int tmp_commit(int fd, const char *tmp, const char *path, const char *text)
{
	size_t len = strlen(text);
	int ret = 0;

	if (write(fd, text, len) != (ssize_t)len || fsync(fd))
		ret = errno ? -errno : -EIO;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* Replace PATH's content with TEXT at once (a temporary file beside it,
 * renamed over it), keeping its mode. */
int write_text(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	struct stat st;
	int fd;

	if (fmt_path(tmp, sizeof(tmp), "%s.sluice-tmp", path))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (!stat(path, &st))
		fchmod(fd, st.st_mode & 07777);
	return tmp_commit(fd, tmp, path, text);
}

/* The temporary file is made afresh, never a stale one reused (someone may
 * hold it open from when its mode was wider), and has its mode and group
 * before it holds anything: the rename makes the file visible as it is. */
int write_text_private(const char *path, const char *text, gid_t gid)
{
	static bool warned;
	char tmp[PATH_MAX];
	bool shared;
	int fd, err;

	if (fmt_path(tmp, sizeof(tmp), "%s.sluice-tmp", path))
		return -ENAMETOOLONG;
	if (unlink(tmp) && errno != ENOENT)
		return -errno;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	shared = gid != (gid_t)-1 && !fchown(fd, -1, gid);
	if (gid != (gid_t)-1 && !shared && !warned) {
		warned = true;	/* (once: it would be every walk's) */
		log_warn("%s: giving it to group %u: %s; it is root's alone", path, (unsigned)gid,
			 strerror(errno));
	}
	if (fchmod(fd, shared ? 0640 : 0600)) {	/* (whatever the umask made it) */
		err = errno;
		close(fd);
		unlink(tmp);
		return -err;
	}
	return tmp_commit(fd, tmp, path, text);
}

/* Whether this kernel lets an XDP program call bpf_xdp_adjust_meta(): every
 * Debian kernel does, but a kernel built to refuse it rejects any program
 * holding the call, and the datapath is then loaded without it (its XDP
 * hands nothing over in metadata: modes.c). Loads a two-call program. */
bool xdp_meta_works(void)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_xdp_adjust_meta },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static int known = -1;
	int fd;

	if (known >= 0)
		return known;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", prog, ARRAY_SIZE(prog), NULL);
	known = fd >= 0 || errno != EINVAL;	/* (refused as this call, not for want of rights) */
	if (fd >= 0)
		close(fd);
	return known;
}

long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}
