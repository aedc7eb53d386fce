/* nf_standby.c - the NIC's hot standby transport: set up, held idle,
 * promoted (see nf_standby.h). */
#define _GNU_SOURCE
#include "nf_standby.h"

#include "nf_announce.h"
#include "sf_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DRAIN_ROUNDS 8 /* harvests per queue per call: the loop stays responsive */

static void drop_rx(void *arg, const uint8_t *frame, unsigned len, uint16_t flags,
                    const netif_extra_info_t *gso)
{
    struct nf_dev *d = arg;
    (void)frame, (void)len, (void)flags, (void)gso;
    d->sb_rx_dropped++;
}

/* Take and drop every response in l's rings now; post the buffers again.
 * -1 with why: a protocol violation (a tx response among them: nothing
 * was asked). */
static int drain_link(struct nf_dev *d, struct nf_link *l, char *why, size_t len)
{
    for (unsigned k = 0; k < l->nq; k++) {
        for (int round = 0; round < DRAIN_ROUNDS; round++) {
            int r = nf_conn_harvest(l->q[k], drop_rx, d, why, len);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
        }
        nf_conn_push(l->q[k]); /* rx buffers only: no tx request is ever queued */
    }
    return 0;
}

void nf_standby_drain(struct nf_dev *d)
{
    if (!d->sb.nq)
        return;
    char why[160];
    if (drain_link(d, &d->sb, why, sizeof(why)) < 0)
        sfc_standby_fault(&d->c, "%s", why);
}

void nf_standby_teardown(void *cls, struct sfx *sx)
{
    struct nf_dev *d = cls;
    nf_link_free(&d->sb);
    nf_remove_transport(sx);
}

int nf_standby_setup(void *cls, struct sfx *sx, char *why, size_t len)
{
    struct nf_dev *d = cls;
    nf_link_free(&d->sb); /* never two: a retry starts afresh */
    int r = nf_dev_share(d, &d->sb, sx, "standby backend", why, len);
    if (r == -1 && errno == ENOSPC) {
        /* gntalloc's limit (1024 by default) holds the live transport's
         * grants and not another one's: no use retrying until it changes. */
        snprintf(why, len,
                 "no grants left for a second transport beside the live one's %u pages "
                 "(gntalloc's limit)",
                 nf_link_grants(&d->ln));
        return SFC_MISMATCH;
    }
    return r;
}

int nf_standby_connect(void *cls, struct sfx *sx, char *what, size_t len)
{
    struct nf_dev *d = cls;
    /* Its features again now that it is Connected: the ones a promotion
     * will use, and still our NIC. */
    char msg[256];
    int r = nf_link_negotiate(&d->sb, sx, d->mac, msg, sizeof(msg));
    if (r > 0) {
        snprintf(what, len, "%s", msg);
        return SFC_MISMATCH;
    }
    if (r < 0 || d->sb.feat.max_queues < d->sb.nq) {
        nf_log(d, false, "standby backend %s: %s", sx->be,
               r < 0 ? msg : "it offers fewer queues than it connected with");
        return -1;
    }
    d->sb.filter_on = d->sb.filter_on && d->sb.feat.mcast;
    bool fits = nf_dev_mtu_fits(d, &d->sb);
    snprintf(what, len,
             "%u queue%s, %s, %s; rx buffers posted, what it receives until promoted is dropped; "
             "nothing sent%s",
             d->sb.nq, d->sb.nq > 1 ? "s" : "", d->sb.feat.sg ? "sg" : "no sg",
             d->sb.feat.mcast ? "multicast control" : "no multicast control",
             fits ? "" : "; the guest's MTU needs feature-sg, which it does not offer");
    return 0;
}

/* The RARP announcement of our MAC, first on the promoted transport. */
static bool announce(struct nf_dev *d, uint64_t now)
{
    uint8_t f[NF_ANNOUNCE_LEN];
    nf_announce_frame(d->mac, f);
    const struct virtio_net_hdr none = {0};
    if (!nf_conn_tx_room(d->ln.q[0], 1, 1))
        return false; /* cannot happen on a ring nothing was ever sent on */
    nf_conn_tx_frame(d->ln.q[0], f, NF_ANNOUNCE_LEN, 0, NULL, &none, now);
    return true;
}

int nf_standby_promote(void *cls, struct sfx *x, char *what, size_t len)
{
    struct nf_dev *d = cls;
    if (!d->sb.nq) {
        snprintf(what, len, "no standby transport held");
        nf_dev_link_down(d);
        return -1;
    }
    nf_link_take(&d->ln, &d->sb);
    /* Everything it received before this moment: copies of what the failed
     * backend delivered, or frames for nobody. */
    uint64_t before = d->sb_rx_dropped;
    char why[160];
    if (drain_link(d, &d->ln, why, sizeof(why)) < 0) {
        nf_log(d, false, "standby backend %s at promotion: %s", x->be, why);
        nf_dev_link_down(d);
        return -1; /* the driver tears it down and connects afresh */
    }
    for (unsigned k = 0; k < d->ln.nq; k++)
        nf_conn_rx_drop_partial(d->ln.q[k]);
    nf_dev_new_backend(d);
    bool said = announce(d, sf_now_ms());
    /* What is the standby's first: the connect line after it is long. The
     * wall clock (each domain takes Xen's at its boot) places the replay
     * against the backend's log, to within the two domains' offset. */
    struct timespec wc;
    clock_gettime(CLOCK_REALTIME, &wc);
    int o = snprintf(what, len,
                     "%s%" PRIu64 " frames it received while held dropped; wall clock %lld.%03ld; ",
                     said ? "our MAC announced (RARP); " : "", d->sb_rx_dropped - before,
                     (long long)wc.tv_sec, wc.tv_nsec / 1000000);
    if (o < 0 || (size_t)o >= len)
        o = 0;
    return nf_dev_restore(d, x, false, what + o, len - (size_t)o);
}
