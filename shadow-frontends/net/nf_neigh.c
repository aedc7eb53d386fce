/* nf_neigh.c - the TAP's neighbour probe budget across a recovery (see
 * nf_neigh.h). */
#define _GNU_SOURCE
#include "nf_neigh.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GRACE_EXTRA_MS  1000u
#define RETRANS_DEFAULT 1000u  /* Linux's retrans_time_ms, if it cannot be read */
#define RETRANS_MAX_MS  60000u /* a longer one counts as this for the grace */

static const char *const fam_name[NF_NEIGH_FAMS] = {"ipv4", "ipv6"};

static void nlog(const struct nf_neigh *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void nlog(const struct nf_neigh *n, const char *fmt, ...)
{
    if (!n->log)
        return;
    char buf[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    n->log(n->log_arg, buf);
}

static void path_of(const struct nf_neigh *n, unsigned f, const char *dev, const char *key,
                    char *path, size_t len)
{
    snprintf(path, len, "%s/%s/neigh/%s/%s", n->root, fam_name[f], dev, key);
}

/* A sysctl's integer: 0 or -1 (errno; EINVAL: not one number in range). */
static int read_int(const char *path, int *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[32];
    ssize_t got;
    do
        got = read(fd, buf, sizeof(buf) - 1);
    while (got < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (got < 0) {
        errno = e;
        return -1;
    }
    buf[got] = '\0';
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || end == buf || (*end && *end != '\n') || v < 0 || v > INT_MAX) {
        errno = EINVAL;
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int write_int(const char *path, int v)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[24];
    int len = snprintf(buf, sizeof(buf), "%d\n", v);
    ssize_t put;
    do
        put = write(fd, buf, (size_t)len);
    while (put < 0 && errno == EINTR);
    int e = errno;
    if (close(fd) < 0 && put == len)
        return -1;
    if (put != len) { /* a sysctl refuses a value out of its range here: EINVAL */
        errno = put < 0 ? e : EIO;
        return -1;
    }
    return 0;
}

void nf_neigh_init(struct nf_neigh *n, const char *root, const char *ifname, nf_neigh_log_fn *log,
                   void *log_arg)
{
    memset(n, 0, sizeof(*n));
    n->root = root;
    snprintf(n->ifname, sizeof(n->ifname), "%s", ifname);
    n->log = log;
    n->log_arg = log_arg;
}

/* The family is not there at all (IPv6 disabled on the kernel command line). */
static bool fam_absent(const struct nf_neigh *n, unsigned f)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/%s", n->root, fam_name[f]);
    return access(dir, F_OK) < 0 && errno == ENOENT;
}

int nf_neigh_repair(struct nf_neigh *n)
{
    int fixed = 0;
    for (unsigned f = 0; f < NF_NEIGH_FAMS; f++) {
        char path[PATH_MAX], dpath[PATH_MAX];
        int v, dv;
        path_of(n, f, n->ifname, "mcast_solicit", path, sizeof(path));
        if (read_int(path, &v) < 0 || v != NF_NEIGH_PROBES)
            continue; /* errors are for the raise to report */
        path_of(n, f, "default", "mcast_solicit", dpath, sizeof(dpath));
        if (read_int(dpath, &dv) < 0) {
            nlog(n,
                 "%s is %d, as a netfront leaves it during a recovery, but %s cannot be "
                 "read (%m): left as it is",
                 path, v, dpath);
            continue;
        }
        if (write_int(path, dv) < 0) {
            nlog(n,
                 "%s is %d, as a netfront leaves it during a recovery; writing the default %d: "
                 "%m: left as it is",
                 path, v, dv);
            continue;
        }
        nlog(n,
             "%s was %d, as a netfront stopped during a recovery leaves it: set to the default "
             "%d (the value before that is not known)",
             path, v, dv);
        fixed++;
    }
    return fixed;
}

void nf_neigh_raise(struct nf_neigh *n, char *msg, size_t len)
{
    char part[NF_NEIGH_FAMS][64];
    unsigned retrans = 0;
    for (unsigned f = 0; f < NF_NEIGH_FAMS; f++) {
        char path[PATH_MAX];
        int v;
        path_of(n, f, n->ifname, "retrans_time_ms", path, sizeof(path));
        if (read_int(path, &v) == 0 && (unsigned)v > retrans)
            retrans = (unsigned)v;
        path_of(n, f, n->ifname, "mcast_solicit", path, sizeof(path));
        if (read_int(path, &v) < 0) {
            int e = errno;
            if (e == ENOENT && fam_absent(n, f)) {
                snprintf(part[f], sizeof(part[f]), "%s absent", fam_name[f]);
            } else {
                errno = e;
                nlog(n,
                     "neighbour probe budget: read %s: %m; %s resolution keeps its own budget "
                     "in this recovery",
                     path, fam_name[f]);
                snprintf(part[f], sizeof(part[f]), "%s not raised", fam_name[f]);
            }
            n->raised[f] = false;
            continue;
        }
        if (n->raised[f] && v == NF_NEIGH_PROBES) { /* a fault during the recovery */
            snprintf(part[f], sizeof(part[f]), "%s %d->%d", fam_name[f], n->was[f], v);
            continue;
        }
        n->raised[f] = false;
        if (v >= NF_NEIGH_PROBES) {
            snprintf(part[f], sizeof(part[f]), "%s kept at %d", fam_name[f], v);
            continue;
        }
        if (write_int(path, NF_NEIGH_PROBES) < 0) {
            nlog(n,
                 "neighbour probe budget: write %d to %s: %m; %s resolution gives up after "
                 "%d probes in this recovery",
                 NF_NEIGH_PROBES, path, fam_name[f], v);
            snprintf(part[f], sizeof(part[f]), "%s not raised", fam_name[f]);
            continue;
        }
        n->raised[f] = true;
        n->was[f] = v;
        snprintf(part[f], sizeof(part[f]), "%s %d->%d", fam_name[f], v, NF_NEIGH_PROBES);
    }
    if (retrans)
        n->retrans_ms = retrans < RETRANS_MAX_MS ? retrans : RETRANS_MAX_MS;
    else if (!n->retrans_ms)
        n->retrans_ms = RETRANS_DEFAULT;
    snprintf(msg, len, "neighbour probes (mcast_solicit) %s, %s", part[0], part[1]);
}

bool nf_neigh_raised(const struct nf_neigh *n)
{
    for (unsigned f = 0; f < NF_NEIGH_FAMS; f++)
        if (n->raised[f])
            return true;
    return false;
}

unsigned nf_neigh_grace_ms(const struct nf_neigh *n)
{
    unsigned r = n->retrans_ms ? n->retrans_ms : RETRANS_DEFAULT;
    return 2 * r + GRACE_EXTRA_MS;
}

void nf_neigh_restore(struct nf_neigh *n, char *msg, size_t len)
{
    char part[NF_NEIGH_FAMS][64];
    for (unsigned f = 0; f < NF_NEIGH_FAMS; f++) {
        part[f][0] = '\0';
        if (!n->raised[f])
            continue;
        n->raised[f] = false;
        char path[PATH_MAX];
        int v;
        path_of(n, f, n->ifname, "mcast_solicit", path, sizeof(path));
        if (read_int(path, &v) < 0) {
            nlog(n, "neighbour probe budget: read %s: %m; not put back to %d", path, n->was[f]);
            snprintf(part[f], sizeof(part[f]), "%s not put back", fam_name[f]);
            continue;
        }
        if (v != NF_NEIGH_PROBES) {
            snprintf(part[f], sizeof(part[f]), "%s left at %d (set during the recovery)",
                     fam_name[f], v);
            continue;
        }
        if (write_int(path, n->was[f]) < 0) {
            nlog(n, "neighbour probe budget: write %d back to %s: %m; it stays at %d", n->was[f],
                 path, v);
            snprintf(part[f], sizeof(part[f]), "%s not put back", fam_name[f]);
            continue;
        }
        snprintf(part[f], sizeof(part[f]), "%s %d", fam_name[f], n->was[f]);
    }
    snprintf(msg, len, "neighbour probes (mcast_solicit) of %s back: %s%s%s", n->ifname, part[0],
             part[0][0] && part[1][0] ? ", " : "", part[1]);
}
