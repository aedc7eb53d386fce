/* net-neigh-test - unit tests of the netfront's neighbour probe budget
 * across a recovery (nf_neigh.c), on a directory laid out as
 * /proc/sys/net is (ROOT/{ipv4,ipv6}/neigh/{eth0,default}/...): the values
 * recorded and put back exactly, one the guest set during the recovery
 * kept, one already over the raised budget left alone, a fault during the
 * recovery (raise twice), IPv6 absent, a file that cannot be written (an
 * error logged, nothing raised), the grace from retrans_time_ms, and the
 * start-up repair of a budget a killed netfront left raised. Exit 0 if every
 * check holds. */
#define _GNU_SOURCE
#include "nf_neigh.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char root[256];
static char logged[8][384];
static unsigned nlogged;

static void log_cb(void *arg, const char *msg)
{
    (void)arg;
    if (nlogged < 8)
        snprintf(logged[nlogged], sizeof(logged[0]), "%s", msg);
    nlogged++;
}

static bool log_has(const char *s)
{
    for (unsigned i = 0; i < nlogged && i < 8; i++)
        if (strstr(logged[i], s))
            return true;
    return false;
}

static void path(char *p, size_t len, const char *fam, const char *dev, const char *key)
{
    snprintf(p, len, "%s/%s/neigh/%s/%s", root, fam, dev, key);
}

static void put(const char *fam, const char *dev, const char *key, int v)
{
    char p[PATH_MAX];
    path(p, sizeof(p), fam, dev, key);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "%d\n", v);
    fclose(f);
}

static int get(const char *fam, const char *dev, const char *key)
{
    char p[PATH_MAX];
    path(p, sizeof(p), fam, dev, key);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    int v = -1;
    if (fscanf(f, "%d", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

static void mkdirs(const char *fam)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", root, fam);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/%s/neigh", root, fam);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/%s/neigh/eth0", root, fam);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/%s/neigh/default", root, fam);
    mkdir(p, 0755);
}

/* A fresh tree: both families, eth0 with the guest's own values. */
static void fresh(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'/ipv4 '%s'/ipv6", root, root);
    CHECK(system(cmd) == 0);
    mkdirs("ipv4");
    mkdirs("ipv6");
    put("ipv4", "eth0", "mcast_solicit", 2);
    put("ipv6", "eth0", "mcast_solicit", 4);
    put("ipv4", "eth0", "retrans_time_ms", 1000);
    put("ipv6", "eth0", "retrans_time_ms", 1000);
    put("ipv4", "default", "mcast_solicit", 3);
    put("ipv6", "default", "mcast_solicit", 3);
    nlogged = 0;
}

static void test_raise_restore(void)
{
    fresh();
    struct nf_neigh n;
    char msg[256];
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    CHECK(!nf_neigh_raised(&n));
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK(nf_neigh_raised(&n));
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), NF_NEIGH_PROBES);
    CHECK_EQ(get("ipv6", "eth0", "mcast_solicit"), NF_NEIGH_PROBES);
    CHECK(strstr(msg, "ipv4 2->3600") && strstr(msg, "ipv6 4->3600"));
    CHECK_EQ(nf_neigh_grace_ms(&n), 3000);
    /* A fault during the recovery: raised again, the record is the guest's. */
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK(strstr(msg, "ipv4 2->3600") && strstr(msg, "ipv6 4->3600"));
    nf_neigh_restore(&n, msg, sizeof(msg));
    CHECK(!nf_neigh_raised(&n));
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), 2);
    CHECK_EQ(get("ipv6", "eth0", "mcast_solicit"), 4);
    CHECK(strstr(msg, "ipv4 2") && strstr(msg, "ipv6 4"));
    CHECK_EQ(nlogged, 0);
    /* Restoring twice writes nothing. */
    put("ipv4", "eth0", "mcast_solicit", 9);
    nf_neigh_restore(&n, msg, sizeof(msg));
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), 9);
}

static void test_guest_changes(void)
{
    fresh();
    struct nf_neigh n;
    char msg[256];
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    put("ipv6", "eth0", "mcast_solicit", 5000); /* already over ours: left alone */
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK(strstr(msg, "ipv6 kept at 5000"));
    CHECK_EQ(get("ipv6", "eth0", "mcast_solicit"), 5000);
    put("ipv4", "eth0", "mcast_solicit", 7); /* the guest's, during the recovery */
    put("ipv6", "eth0", "mcast_solicit", 6);
    nf_neigh_restore(&n, msg, sizeof(msg));
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), 7);
    CHECK_EQ(get("ipv6", "eth0", "mcast_solicit"), 6);
    CHECK(strstr(msg, "ipv4 left at 7"));
    /* Set by the guest between two faults of one recovery: recorded anew. */
    fresh();
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    nf_neigh_raise(&n, msg, sizeof(msg));
    put("ipv4", "eth0", "mcast_solicit", 8);
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), NF_NEIGH_PROBES);
    nf_neigh_restore(&n, msg, sizeof(msg));
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), 8);
    CHECK_EQ(get("ipv6", "eth0", "mcast_solicit"), 4);
}

static void test_errors(void)
{
    fresh();
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'/ipv6", root);
    CHECK(system(cmd) == 0);
    struct nf_neigh n;
    char msg[256];
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK(strstr(msg, "ipv4 2->3600") && strstr(msg, "ipv6 absent"));
    CHECK_EQ(nlogged, 0); /* IPv6 not there at all: no error */
    nf_neigh_restore(&n, msg, sizeof(msg));
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), 2);

    /* ipv6's file unreadable (a directory: EISDIR) and ipv4's read-only (a
     * sysctl of mode 0444, which root cannot write either): each logged,
     * nothing raised, nothing else happens. */
    fresh();
    char p[PATH_MAX];
    path(p, sizeof(p), "ipv6", "eth0", "mcast_solicit");
    CHECK(unlink(p) == 0 && mkdir(p, 0755) == 0);
    const char *ro = "/proc/sys/kernel/cap_last_cap";
    bool have_ro = access(ro, R_OK) == 0;
    if (have_ro) {
        path(p, sizeof(p), "ipv4", "eth0", "mcast_solicit");
        CHECK(unlink(p) == 0 && symlink(ro, p) == 0);
    }
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK(strstr(msg, "ipv6 not raised"));
    CHECK(log_has("read ") && log_has("ipv6/neigh/eth0/mcast_solicit: Is a directory"));
    if (have_ro) {
        CHECK(!nf_neigh_raised(&n));
        CHECK(strstr(msg, "ipv4 not raised"));
        CHECK_EQ(nlogged, 2);
        CHECK(log_has("write 3600 to ") && log_has("ipv4/neigh/eth0/mcast_solicit: "));
    } else {
        printf("net-neigh-test: no %s: the write error is not tried\n", ro);
    }
    unsigned before = nlogged;
    nf_neigh_restore(&n, msg, sizeof(msg));
    CHECK_EQ(nlogged, before);

    /* ipv4's holds no number: logged as such. */
    fresh();
    path(p, sizeof(p), "ipv4", "eth0", "mcast_solicit");
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("three\n", f);
        fclose(f);
    }
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK(strstr(msg, "ipv4 not raised") && strstr(msg, "ipv6 4->3600"));
    CHECK(log_has("ipv4/neigh/eth0/mcast_solicit: Invalid argument"));
    nf_neigh_restore(&n, msg, sizeof(msg));
    CHECK_EQ(get("ipv6", "eth0", "mcast_solicit"), 4);

    /* The grace follows retrans_time_ms (the longest), bounded. */
    fresh();
    put("ipv6", "eth0", "retrans_time_ms", 2500);
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK_EQ(nf_neigh_grace_ms(&n), 6000);
    nf_neigh_restore(&n, msg, sizeof(msg));
    put("ipv4", "eth0", "retrans_time_ms", 100000000);
    nf_neigh_raise(&n, msg, sizeof(msg));
    CHECK_EQ(nf_neigh_grace_ms(&n), 121000);
    nf_neigh_restore(&n, msg, sizeof(msg));
}

static void test_repair(void)
{
    fresh();
    put("ipv4", "eth0", "mcast_solicit", NF_NEIGH_PROBES); /* left by a killed netfront */
    put("ipv4", "default", "mcast_solicit", 4);
    struct nf_neigh n;
    nf_neigh_init(&n, root, "eth0", log_cb, NULL);
    CHECK_EQ(nf_neigh_repair(&n), 1);
    CHECK_EQ(get("ipv4", "eth0", "mcast_solicit"), 4);
    CHECK_EQ(get("ipv6", "eth0", "mcast_solicit"), 4); /* the guest's: untouched */
    CHECK_EQ(nlogged, 1);
    CHECK(log_has("set to the default 4"));
    CHECK_EQ(nf_neigh_repair(&n), 0);
    CHECK(!nf_neigh_raised(&n));
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof(root), "%s/net-neigh-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    test_raise_restore();
    test_guest_changes();
    test_errors();
    test_repair();
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "net-neigh-test: could not remove %s\n", root);
    return check_done("net-neigh-test");
}
