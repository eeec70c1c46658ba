// SPDX-License-Identifier: GPL-2.0
/* This instance's files in /run/sluice (run.h). */
#define _GNU_SOURCE	/* F_OFD_SETLK */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "instance.h"
#include "run.h"
#include "util.h"

/* `sluice run` holds an exclusive OFD lock on this file for its whole life
 * and writes its pid into it, so the pid is trusted only while the lock is
 * held: a daemon that crashed or was killed leaves a stale pid, never a
 * false "running". Probes use F_OFD_GETLK, which does not take the lock (a
 * probing `status` must not make a starting `run` fail). The file is named
 * after the pin folder's path, '%' and '/' escaped so names never collide,
 * and is never removed (removing it under a live daemon would let a second
 * one start). */
int pin_escaped(const char *pin, char *buf, size_t len)
{
	char canon[PATH_MAX];
	size_t o = 0;

	if (!realpath(pin, canon) && fmt_path(canon, sizeof(canon), "%s", pin))
		return -1;
	for (const char *c = canon; *c; c++) {
		if (o + 4 >= len)
			return -1;
		o += *c == '/' ? (size_t)sprintf(buf + o, "%%2F")
		     : *c == '%' ? (size_t)sprintf(buf + o, "%%25")
		     : (size_t)(buf[o] = *c, 1);
	}
	buf[o] = 0;
	return 0;
}

int dp_run_path(const char *pin, const char *what, char *buf, size_t len)
{
	char esc[PATH_MAX * 3];

	if (pin_escaped(pin, esc, sizeof(esc)))
		return -1;
	if (mkdir(SLUICE_RUN_DIR, 0755) && errno != EEXIST)
		return -1;
	return fmt_path(buf, len, "%s/%s-%s", SLUICE_RUN_DIR, what, esc);
}

/* Looked up at every write: the package may make the group while the
 * daemon runs. */
int dp_run_write_private(const char *path, const char *text)
{
	struct group *g = getgrnam(SLUICE_PAGE_GROUP);

	return write_text_private(path, text, g ? g->gr_gid : (gid_t)-1);
}

static int daemon_lock_path(const char *pin, char *buf, size_t len)
{
	char base[PATH_MAX];

	return dp_run_path(pin, "daemon", base, sizeof(base)) ||
	       fmt_path(buf, len, "%s.lock", base);
}

static int daemon_lock_open(const char *pin)
{
	char path[PATH_MAX];
	int fd;

	if (daemon_lock_path(pin, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (mkdir(SLUICE_RUN_DIR, 0755) && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

int dp_daemon_lock(const char *pin)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char pid[16];
	int fd = daemon_lock_open(pin), err, n;

	if (fd < 0)
		return fd;
	if (fcntl(fd, F_OFD_SETLK, &lk)) {
		err = errno == EACCES ? EWOULDBLOCK : errno;
		close(fd);
		return -err;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		log_warn("%s: recording the daemon's pid: %s", SLUICE_RUN_DIR, strerror(errno));
	return fd;
}

pid_t dp_daemon_pid(const char *pin)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char buf[16] = "";
	int fd = daemon_lock_open(pin);
	pid_t pid = 0;

	if (fd < 0)
		return 0;
	if (!fcntl(fd, F_OFD_GETLK, &lk) && lk.l_type != F_UNLCK &&
	    pread(fd, buf, sizeof(buf) - 1, 0) > 0)
		pid = atoi(buf);
	close(fd);
	return pid;
}

/* The daemon is going: out-of-order fragments would be held for nobody. */
void dp_frag_hold_off(const char *pin)
{
	struct sluice_dp_config v;
	__u32 key = 0;
	struct dp dp;

	if (dp_open(&dp, pin, DP_WRITE))
		return;
	if (!dp_open_maps(&dp) && !bpf_map_lookup_elem(dp_fd(&dp, MAP_CONFIG), &key, &v)) {
		v.flags &= ~SLUICE_CFG_FRAG_HOLD;
		bpf_map_update_elem(dp_fd(&dp, MAP_CONFIG), &key, &v, BPF_ANY);
	}
	dp_close(&dp);
}
