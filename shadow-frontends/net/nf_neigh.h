/* nf_neigh.h - the TAP's neighbour probe budget across a recovery.
 *
 * Carrier off (nf_isolate) makes the guest's kernel flush the interface's
 * neighbour entries; a packet sent meanwhile to an on-link address starts
 * resolution afresh, which gives up after mcast_solicit probes (3 x
 * retrans_time: 3 s by default) and answers what waits on it - a connect()'s
 * SYN - with a local host unreachable: EHOSTUNREACH in SYN_SENT. While the
 * backend is replaced the probes cannot be answered, so the budget is raised
 * for the recovery (mcast_solicit of IPv4 and IPv6 to NF_NEIGH_PROBES) and
 * the values recorded before are written back a grace after the recovery
 * ends (nf_neigh_grace_ms: by then every entry of a host that is
 * there has resolved through the new backend; one that has not fails at
 * its next probe, as with the guest's own budget).
 *
 * Only mcast_solicit: resolution from scratch (INCOMPLETE) sends that many
 * probes (its probe count starts at ucast_solicit, Linux's
 * neigh_max_probes); an entry that survived the carrier (kernels before
 * 4.20 keep them) sends its packets while it probes and queues none, and
 * its next packet after it failed starts from scratch again, under the
 * raised budget. Files: ROOT/{ipv4,ipv6}/neigh/IF/mcast_solicit, ROOT
 * /proc/sys/net (tests: a directory of their own). Each error is logged
 * through the callback (the file, what was done, errno) and nothing else
 * happens: the family keeps the guest's budget.
 */
#ifndef NF_NEIGH_H
#define NF_NEIGH_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

/* Probes while recovering: an hour at the default retrans_time of 1 s (a
 * connect gives up on its own after its SYN retries, 127 s by default). A
 * value exactly this at start-up was left by a netfront stopped during a
 * recovery (nf_neigh_repair). */
#define NF_NEIGH_PROBES 3600
#define NF_NEIGH_FAMS   2 /* ipv4, ipv6 */

typedef void nf_neigh_log_fn(void *arg, const char *msg);

struct nf_neigh {
    const char *root; /* /proc/sys/net */
    char ifname[IFNAMSIZ];
    nf_neigh_log_fn *log;
    void *log_arg;
    bool raised[NF_NEIGH_FAMS]; /* we wrote NF_NEIGH_PROBES */
    int was[NF_NEIGH_FAMS];     /* ... over this value */
    unsigned retrans_ms;        /* the longest retrans_time_ms at the raise */
};

void nf_neigh_init(struct nf_neigh *n, const char *root, const char *ifname, nf_neigh_log_fn *log,
                   void *log_arg);
/* At start-up (an interface that outlived a netfront: a persistent TAP): a
 * family whose value is NF_NEIGH_PROBES is set to the one new interfaces
 * get (ROOT/<fam>/neigh/default/mcast_solicit), logged. The values it had
 * before are not known. Returns how many were set. */
int nf_neigh_repair(struct nf_neigh *n);
/* A recovery begins: record each family's value and raise it (one already
 * raised by us stays as recorded; one at or over NF_NEIGH_PROBES is left as
 * the guest set it). A summary goes to msg. */
void nf_neigh_raise(struct nf_neigh *n, char *msg, size_t len);
bool nf_neigh_raised(const struct nf_neigh *n);
/* How long after the recovery the values go back: two probe intervals (the
 * next probe of each waiting entry goes out through the new backend, and one
 * more if that was lost) and a second. */
unsigned nf_neigh_grace_ms(const struct nf_neigh *n);
/* Write the recorded values back, where the value is still ours (a guest
 * that set its own during the recovery keeps it). A summary goes to msg. */
void nf_neigh_restore(struct nf_neigh *n, char *msg, size_t len);

#endif
