/* nf_dev.c - the shadow netfront: its connections as a class of the
 * connection driver (setup, connect and restore, isolation), the TAP's
 * carrier, the tx held while there is no backend, rx delivery, the loop. */
#define _GNU_SOURCE
#include "nf_dev.h"

#include "net_l4.h"
#include "nf_standby.h"
#include "sf_time.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <unistd.h>

#define HELD_MAX_BYTES (4u << 20)
#define TAP_BATCH      64u /* frames read from the TAP per loop turn */
#define VNET           sizeof(struct virtio_net_hdr)
/* GSO packets the TAP may hand us: a frame of at most 65535 bytes. */
#define GSO_MAX_BYTES 65000u
/* A read of this many bytes may have been truncated. */
#define READ_MAX (VNET + NF_MAX_FRAME + 1)

/* Lines from the class and from the connection driver: DEBUG only with
 * --verbose. */
static void log_sink(void *arg, enum sf_log_level level, const char *msg)
{
    const struct nf_dev *d = arg;
    if (level == SF_LOG_DEBUG && !d->cfg.verbose)
        return;
    fprintf(stderr, "understudy-netfront[%s]: %s\n", d->cfg.device, msg);
}

void nf_log(const struct nf_dev *d, bool verbose_only, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sf_vlogf(log_sink, (void *)d, verbose_only ? SF_LOG_DEBUG : SF_LOG_INFO, fmt, ap);
    va_end(ap);
}

static void carrier(struct nf_dev *d, bool on)
{
    if (nf_tap_carrier(&d->tap, on) < 0)
        nf_log(d, false, "TUNSETCARRIER %d on %s: %m", on, d->tap.name);
}

/* ---- the neighbour probe budget (nf_neigh.h) ---- */

static void neigh_log(void *arg, const char *msg)
{
    nf_log(arg, false, "%s", msg);
}

static void neigh_restore(struct nf_dev *d, const char *when)
{
    d->neigh_restore_at = 0;
    if (!nf_neigh_raised(&d->neigh))
        return;
    char msg[160];
    nf_neigh_restore(&d->neigh, msg, sizeof(msg));
    nf_log(d, false, "%s %s", msg, when);
}

/* Live again: the recorded values go back once the entries that waited
 * have resolved through the new backend (nf_neigh_grace_ms). */
static void neigh_step(struct nf_dev *d, uint64_t now)
{
    if (!nf_neigh_raised(&d->neigh) || d->c.rec.state != SF_LIVE)
        return;
    if (!d->neigh_restore_at) {
        d->neigh_restore_at = now + nf_neigh_grace_ms(&d->neigh);
        return;
    }
    if (now < d->neigh_restore_at)
        return;
    char when[64];
    snprintf(when, sizeof(when), "(%u ms after the recovery)", nf_neigh_grace_ms(&d->neigh));
    neigh_restore(d, when);
}

/* ---- held tx ---- */

static void held_push(struct nf_dev *d, const uint8_t *f, unsigned len)
{
    uint8_t *p = malloc(len);
    if (!p) {
        d->tx_drop_held++;
        return;
    }
    memcpy(p, f, len);
    struct nf_held *h = &d->held[(d->held_head + d->held_n) % d->cfg.max_held];
    h->data = p;
    h->len = len;
    d->held_n++;
    d->held_bytes += len;
}

static bool held_full(const struct nf_dev *d)
{
    return d->held_n >= d->cfg.max_held || d->held_bytes >= HELD_MAX_BYTES;
}

static void held_drop_all(struct nf_dev *d)
{
    while (d->held_n) {
        free(d->held[d->held_head].data);
        d->held_head = (d->held_head + 1) % d->cfg.max_held;
        d->held_n--;
    }
    d->held_bytes = 0;
}

/* Frames the dead connection never had answered go first, before those held
 * since, oldest first; what passes the bound is dropped. */
static uint8_t *collect_unanswered(void *arg, const struct virtio_net_hdr *vh, unsigned len)
{
    struct nf_dev *d = arg;
    if (d->n_unans == NF_TX_PAGES)
        return NULL;
    uint8_t *p = malloc(VNET + len);
    if (!p)
        return NULL;
    memcpy(p, vh, VNET);
    d->unans[d->n_unans++] = (struct nf_held){.data = p, .len = VNET + len};
    return p + VNET;
}

static unsigned requeue_unanswered(struct nf_dev *d)
{
    d->n_unans = 0;
    for (unsigned k = 0; k < d->ln.nq; k++)
        nf_conn_unanswered(d->ln.q[k], collect_unanswered, d);
    unsigned kept = 0;
    for (unsigned i = d->n_unans; i-- > 0;) {
        if (d->held_n >= d->cfg.max_held) {
            free(d->unans[i].data);
            d->tx_drop_held++;
            continue;
        }
        d->held_head = (d->held_head + d->cfg.max_held - 1) % d->cfg.max_held;
        d->held[d->held_head] = d->unans[i];
        d->held_n++;
        d->held_bytes += d->unans[i].len;
        kept++;
    }
    d->n_unans = 0;
    return kept;
}

/* ---- the NIC as a class of the connection driver ---- */

/* The oldest unanswered tx request of any queue. */
static bool oldest_all(void *arg, uint64_t *since)
{
    const struct nf_dev *d = arg;
    bool any = false;
    for (unsigned k = 0; k < d->ln.nq; k++) {
        uint64_t o = 0;
        if (nf_conn_oldest(d->ln.q[k], &o) && (!any || o < *since)) {
            *since = o;
            any = true;
        }
    }
    return any;
}

/* The failed link's ports go now; its pages once the loop has done the
 * turn's work (release_retired), so that a switch to the standby and the
 * replay do not wait for them - and at a hot switch its keys too. */
static void nf_teardown(void *arg, struct sfx *x)
{
    struct nf_dev *d = arg;
    nf_link_retire(&d->ln);
    nf_link_take(&d->retired, &d->ln); /* an older one still there: released now */
    d->retired_at = sf_now_ms();
    d->retired_dom = x->be_id;
    if (!d->c.switching) { /* a hot switch: once the replay is on its way (nf_forget) */
        nf_remove_transport(x);
        nf_dev_link_down(d); /* a switch that did not happen after all */
    }
}

/* A hot switch's keys left in the failed connection's dir (nf_teardown). */
static void nf_forget(void *arg, struct sfx *x)
{
    (void)arg;
    nf_remove_transport(x);
}

/* One region of the retired link a turn, after the turn's work, and not
 * while the next backend's replay is on its way (held frames first). */
static void release_retired(struct nf_dev *d)
{
    if (d->c.phase == SFC_UP && sfc_replaying(&d->c))
        return;
    if (!d->retired.nq || nf_link_release_step(&d->retired))
        return;
    nf_log(d, true, "the failed transport of domain %u released, %" PRIu64 " ms after its failure",
           d->retired_dom, sf_now_ms() - d->retired_at);
}

/* The guest's link through an outage. A recovery of the shadow's keeps the
 * carrier on: the guest's tx is held (up to the bound: --max-held, 4 MiB)
 * and sent first to the next backend - among it the ACKs for the last data
 * before the fault, which the dead backend never passed on, so a sender
 * towards the guest goes on at the reconnect instead of at its backed-off
 * timer (seconds away after a cold restart; with the carrier off they were
 * dropped) - and the guest's neighbour entries, which a carrier loss would
 * flush, stay resolved (no re-resolution after the reconnect); a network
 * manager sees no link flap to act on
 * (systemd-networkd drops an interface's addresses on carrier loss unless
 * told otherwise). Without the shadow (--shadow off, what a plain netfront
 * does) or before the first connect, the carrier goes off. Either way:
 * partial checksums only until the next backend says what it takes (we can
 * always complete them), and - the shadow's, in a recovery - a neighbour
 * probe budget that outlasts it (nf_neigh.h): a new entry would give up
 * after mcast_solicit probes (3 s by default), held or dropped, and a
 * connect() waiting on it fail with EHOSTUNREACH (measured:
 * tests/frontends/test-netfront-connect-during-recovery.sh, README.md).
 * Into neigh, what was raised ("" if nothing). */
static void link_down(struct nf_dev *d, char *neigh, size_t len)
{
    bool recovery = d->cfg.shadow && d->c.rec.state != SF_CONNECTING;
    if (!recovery)
        carrier(d, false);
    if (d->cfg.offloads && nf_tap_offload(&d->tap, nf_off_tun_flags(&(struct nf_txcaps){0})) < 0)
        nf_log(d, false, "TUNSETOFFLOAD on %s: %m", d->tap.name);
    neigh[0] = 0;
    /* A recovery (not the first handshake), and the shadow's: a plain
     * netfront (--shadow off) leaves the guest's budget alone. */
    if (recovery && len > 2) {
        d->neigh_restore_at = 0;
        neigh[0] = ';';
        neigh[1] = ' ';
        nf_neigh_raise(&d->neigh, neigh + 2, len - 2);
    }
}

/* What link_down did to the carrier, for the fault's line. */
static const char *carrier_word(const struct nf_dev *d)
{
    return d->tap.carrier ? "carrier kept on" : "carrier off";
}

void nf_dev_link_down(struct nf_dev *d)
{
    if (!d->link_kept)
        return;
    d->link_kept = false;
    char neigh[160];
    link_down(d, neigh, sizeof(neigh));
    nf_log(d, false, "no switch to the standby after all: %s%s", carrier_word(d), neigh);
}

/* Take back what the dead connection never answered, then the link down. */
static void nf_isolate(void *arg, char *held, size_t len)
{
    struct nf_dev *d = arg;
    unsigned replay = d->cfg.shadow && d->ln.nq && d->c.phase == SFC_UP ? requeue_unanswered(d) : 0;
    /* A switch to the held standby (sf_conn.c, switch_from_live): its
     * transport is live in this same turn, so the link stays as it is - each
     * of carrier, offloads and the neighbour budget is a call under the
     * kernel's rtnl lock, and a carrier change sets off the kernel's link
     * work and our own reading of the link again. Unless the promotion fails
     * after all (nf_dev_link_down). */
    if (d->c.switching && d->cfg.shadow) {
        d->link_kept = true;
        snprintf(held, len,
                 "%s kept up for the switch, %u frames held, %u of them unanswered by it",
                 d->tap.name, d->held_n, replay);
        return;
    }
    d->link_kept = false;
    char neigh[160];
    link_down(d, neigh, sizeof(neigh));
    snprintf(held, len, "%s, %u frames held, %u of them unanswered by it%s%s", carrier_word(d),
             d->held_n, replay,
             d->cfg.shadow ? "" : "; shadow off: tx is dropped until reconnected", neigh);
}

static void nf_fail(void *arg, char *what, size_t len)
{
    struct nf_dev *d = arg;
    carrier(d, false);
    held_drop_all(d);
    neigh_restore(d, "(the device failed)");
    snprintf(what, len, "%s stays without carrier from now on", d->tap.name);
}

bool nf_dev_mtu_fits(const struct nf_dev *d, const struct nf_link *l)
{
    /* The largest frame: MTU plus Ethernet and VLAN headers. */
    unsigned frame = d->sh.mtu + NET_ETH_HLEN + 4;
    return frame <= (l->feat.sg ? NF_MAX_FRAME : NF_PAGE);
}

int nf_dev_share(struct nf_dev *d, struct nf_link *l, struct sfx *x, const char *role, char *why,
                 size_t len)
{
    char msg[256];
    int r = nf_link_negotiate(l, x, d->mac, msg, sizeof(msg));
    if (r > 0) {
        snprintf(why, len, "%s", msg);
        return SFC_MISMATCH;
    }
    if (r < 0) {
        nf_log(d, false, "%s %s: %s; retrying", role, x->be, msg);
        errno = EAGAIN; /* not gntalloc's ENOSPC (nf_standby_setup) */
        return -1;
    }
    const struct nf_link_want want = {.queues = d->cfg.queues,
                                      .track = d->cfg.shadow,
                                      .filter = nf_shadow_wants_filter(&d->sh),
                                      .offloads = d->cfg.offloads};
    if (nf_link_share(l, d->gs, d->xce, x, &want, d->tap.nq, msg, sizeof(msg)) < 0) {
        int e = errno; /* the caller may act on it (ENOSPC: gntalloc's limit) */
        nf_log(d, false, "%s %s: %s", role, x->be, msg);
        errno = e;
        return -1;
    }
    return 0;
}

void nf_dev_new_backend(struct nf_dev *d)
{
    memset(&d->applied, 0, sizeof(d->applied));
    /* Without the shadow only the first backend is given the list; a new one
     * sees the changes made from now on, as if it had the list already. */
    if (!d->cfg.shadow && d->programmed)
        d->applied = d->sh;
    d->warned_static = false;
}

static int nf_setup(void *arg, struct sfx *x, char *why, size_t len)
{
    struct nf_dev *d = arg;
    int r = nf_dev_share(d, &d->ln, x, "backend", why, len);
    if (r == 0)
        nf_dev_new_backend(d);
    return r;
}

static void pump_tx(struct nf_dev *d, uint64_t now);

/* A replay step's time (d->rp), the first time cond holds. */
static void rp_mark(struct nf_dev *d, uint64_t *step, bool cond)
{
    if (cond && !*step)
        *step = sf_now_ms() - d->rp.t0 + 1; /* + 1: 0 stays "not yet" */
}

/* The backend is Connected: offloads, carrier on; the restore (multicast
 * list, held tx) runs from the loop until sfc_replayed. */
int nf_dev_restore(struct nf_dev *d, struct sfx *x, bool first, char *what, size_t len)
{
    char cfg[96];
    nf_shadow_describe(&d->sh, cfg, sizeof(cfg));
    if (!nf_dev_mtu_fits(d, &d->ln))
        nf_log(d, false,
               "the guest's MTU %u needs feature-sg, which backend %s does not offer: "
               "frames over one page are dropped",
               d->sh.mtu, x->be);
    d->caps = (struct nf_txcaps){0};
    unsigned tun = 0;
    if (d->cfg.offloads) {
        d->caps.csum6 = d->ln.feat.csum6;
        d->caps.gso4 = d->ln.feat.sg && d->ln.feat.gso4 && d->gso_bounded;
        d->caps.gso6 = d->ln.feat.sg && d->ln.feat.gso6 && d->gso_bounded;
        tun = nf_off_tun_flags(&d->caps);
    }
    if (nf_tap_offload(&d->tap, tun) < 0)
        nf_log(d, false, "TUNSETOFFLOAD %#x on %s: %m", tun, d->tap.name);
    carrier(d, true);
    d->link_kept = false;
    d->programmed = true;
    d->rp.t0 = sf_now_ms();
    d->rp.held = d->rp.tx = d->rp.rx = d->rp.mc = 0;
    char feat[64];
    snprintf(feat, sizeof(feat), "%u queue%s, %s, tx offloads%s%s%s", d->ln.nq,
             d->ln.nq > 1 ? "s" : "", d->ln.feat.sg ? "sg" : "no sg", tun ? " csum" : " none",
             d->caps.gso4 ? " tso4" : "", d->caps.gso6 && d->caps.csum6 ? " tso6" : "");
    const char *mc = !d->ln.feat.mcast ? "no multicast control"
                     : d->ln.filter_on ? "multicast filter on"
                                       : "multicast filter off (promisc/allmulti)";
    nf_probe_start(&d->probe, sf_now_ms());
    char probe[128];
    if (!d->cfg.probe_ms)
        snprintf(probe, sizeof(probe), "no liveness probe (--probe-ms 0)");
    else if (d->ln.feat.mcast)
        snprintf(probe, sizeof(probe), "liveness probe after %u ms of idle tx", d->cfg.probe_ms);
    else /* netif has no other request that is answered and changes nothing */
        snprintf(probe, sizeof(probe),
                 "no liveness probe (no multicast control): a hang is seen only while sending");
    if (first)
        snprintf(what, len, "%s, %s; %s; %s carrier on; %s", feat, mc, probe, d->tap.name, cfg);
    else if (!d->cfg.shadow)
        snprintf(what, len, "%s, %s; %s; shadow off: %s not restored, nothing held", feat, mc,
                 probe, cfg);
    else
        snprintf(what, len, "%s, %s; %s; restoring %s, sending %u held frames", feat, mc, probe,
                 cfg, d->held_n);
    /* The replay on its way at once, not after the driver's xenstore work
     * that follows in this turn (a promotion's backend watch: 50-120 ms
     * from a guest on real Xen in QEMU). */
    if (!first && d->cfg.shadow) {
        pump_tx(d, sf_now_ms());
        for (unsigned k = 0; k < d->ln.nq; k++)
            nf_conn_push(d->ln.q[k]);
        rp_mark(d, &d->rp.held, !d->held_n);
    }
    return 0;
}

static int nf_connect(void *arg, struct sfx *x, bool first, char *what, size_t len)
{
    return nf_dev_restore(arg, x, first, what, len);
}

static const struct sfc_ops nf_conn_ops = {
    /* As Linux netfront: Connected once the keys are written; the backend
     * connects when it sees it. */
    .setup_state = XenbusStateConnected,
    .setup = nf_setup,
    .connect = nf_connect,
    .teardown = nf_teardown,
    .isolate = nf_isolate,
    .fail = nf_fail,
    .oldest = oldest_all,
    .standby_setup = nf_standby_setup,
    .standby_connect = nf_standby_connect,
    .standby_teardown = nf_standby_teardown,
    .promote = nf_standby_promote,
    .forget = nf_forget,
};

/* ---- data ---- */

static void deliver(void *arg, const uint8_t *frame, unsigned len, uint16_t flags,
                    const netif_extra_info_t *gso)
{
    struct nf_dev *d = arg;
    /* The receive filter a NIC applies: our address, broadcast, the
     * multicast the guest joined, everything when promiscuous. Without the
     * shadow: whatever the backend passes on. */
    if (d->cfg.shadow && !nf_shadow_accepts(&d->sh, d->mac, frame)) {
        d->rx_filtered++;
        return;
    }
    struct virtio_net_hdr h;
    const char *why;
    if (nf_off_rx(flags, gso, frame, len, &h, &why) < 0) {
        if (d->rx_drop_off++ < 10)
            nf_log(d, false, "rx packet of %u bytes dropped: %s", len, why);
        return;
    }
    struct iovec iov[2] = {{.iov_base = &h, .iov_len = VNET},
                           {.iov_base = (void *)frame, .iov_len = len}};
    if (writev(d->tap.fd, iov, 2) < 0)
        d->rx_tap_err++;
}

/* One frame as read from the TAP (virtio_net_hdr, then the frame; ours to
 * change). false: no room now (try again later); true: sent or dropped. */
static bool tx_one(struct nf_dev *d, struct nf_conn *c, uint8_t *raw, unsigned rawlen, uint64_t now)
{
    if (rawlen < VNET + NET_ETH_HLEN || rawlen >= READ_MAX) {
        d->tx_drop_big++;
        return true;
    }
    struct virtio_net_hdr h;
    memcpy(&h, raw, VNET);
    uint8_t *f = raw + VNET;
    unsigned len = rawlen - VNET;
    if (len > (d->ln.feat.sg ? NF_MAX_FRAME : NF_PAGE)) {
        d->tx_drop_big++;
        return true;
    }
    unsigned n = (len + NF_PAGE - 1) / NF_PAGE;
    if (!nf_conn_tx_room(c, n, 1))
        return false;
    uint16_t flags;
    netif_extra_info_t gso;
    bool has_gso;
    const char *why;
    if (nf_off_tx(&h, f, len, &d->caps, &flags, &gso, &has_gso, &why) < 0) {
        if (d->tx_drop_off++ < 10)
            nf_log(d, false, "tx frame of %u bytes dropped: %s", len, why);
        return true;
    }
    if (!(flags & NETTXF_csum_blank))
        h.flags &=
            (uint8_t)~VIRTIO_NET_HDR_F_NEEDS_CSUM; /* completed here: a replay must not redo it */
    nf_conn_tx_frame(c, f, len, flags, has_gso ? &gso : NULL, &h, now);
    return true;
}

/* Bring the backend's multicast list to the guest's: one operation per
 * address (netif.h: XEN_NETIF_EXTRA_TYPE_MCAST_ADD/DEL). */
static void sync_mcast(struct nf_dev *d, uint64_t now)
{
    if (!d->ln.feat.mcast)
        return;
    for (unsigned i = 0; i < d->sh.nmc && nf_conn_tx_room(d->ln.q[0], 1, 1); i++) {
        if (nf_shadow_has(&d->applied, d->sh.mc[i]) || d->applied.nmc >= NF_MCAST_MAX)
            continue;
        nf_conn_tx_mcast(d->ln.q[0], XEN_NETIF_EXTRA_TYPE_MCAST_ADD, d->sh.mc[i], now);
        memcpy(d->applied.mc[d->applied.nmc++], d->sh.mc[i], 6);
    }
    for (unsigned i = 0; i < d->applied.nmc && nf_conn_tx_room(d->ln.q[0], 1, 1);) {
        if (nf_shadow_has(&d->sh, d->applied.mc[i])) {
            i++;
            continue;
        }
        nf_conn_tx_mcast(d->ln.q[0], XEN_NETIF_EXTRA_TYPE_MCAST_DEL, d->applied.mc[i], now);
        memcpy(d->applied.mc[i], d->applied.mc[--d->applied.nmc], 6);
    }
    bool want = nf_shadow_wants_filter(&d->sh);
    if (want == d->ln.filter_on)
        return;
    if (d->ln.feat.mcast_dynamic) {
        if (nf_write_mcast_request(&d->c.x, want) == 0)
            d->ln.filter_on = want;
    } else if (!d->warned_static) {
        nf_log(d, false,
               "backend %s samples request-multicast-control at connect only: its multicast "
               "filter stays %s until the next connection",
               d->c.x.be, d->ln.filter_on ? "on" : "off");
        d->warned_static = true;
    }
}

static void pump_tx(struct nf_dev *d, uint64_t now)
{
    sync_mcast(d, now);
    while (d->held_n) {
        struct nf_held *h = &d->held[d->held_head];
        if (!tx_one(d, d->ln.q[0], h->data, h->len, now))
            return;
        free(h->data);
        d->held_bytes -= h->len;
        d->held_head = (d->held_head + 1) % d->cfg.max_held;
        d->held_n--;
    }
    /* Each TAP queue feeds one ring (more TAP queues than rings share them). */
    uint8_t *buf = d->rdbuf;
    for (unsigned k = 0; k < d->tap.nq; k++) {
        struct nf_conn *c = d->ln.q[k % d->ln.nq];
        for (unsigned i = 0; i < TAP_BATCH && nf_conn_tx_room(c, NF_MAX_SLOTS, 1); i++) {
            ssize_t n = read(d->tap.qfd[k], buf, READ_MAX);
            if (n <= 0)
                break;
            if (tx_one(d, c, buf, (unsigned)n, now))
                continue;
            if (d->cfg.shadow) /* cannot happen with the room checked */
                held_push(d, buf, (unsigned)n);
            else
                d->tx_drop_held++;
        }
    }
}

/* The liveness probe (nf_probe.h): after probe_ms with no tx request
 * outstanding on any queue, one request that changes nothing, so that a
 * backend that hangs while the guest only receives is seen by the deadline. */
static void probe(struct nf_dev *d, uint64_t now)
{
    if (!d->ln.feat.mcast)
        return;
    bool busy = d->held_n || sfc_replaying(&d->c);
    for (unsigned k = 0; k < d->ln.nq; k++)
        busy = busy || !nf_conn_tx_idle(d->ln.q[k]);
    if (!nf_probe_due(&d->probe, busy, now))
        return;
    /* Outside the guest's list as last read and the list the backend has:
     * deleting it is a no-op there, whatever the guest joins next. */
    uint8_t a[6];
    nf_probe_addr(&d->sh, &d->applied, a);
    if (nf_conn_tx_probe(d->ln.q[0], a, now))
        nf_probe_sent(&d->probe, now);
    else
        nf_probe_start(&d->probe, now); /* cannot happen on idle rings; never spin */
}

/* No backend: hold what the kernel had queued, up to the bound. */
static void hold_tx(struct nf_dev *d)
{
    uint8_t *buf = d->rdbuf;
    for (unsigned k = 0; k < d->tap.nq; k++) {
        for (unsigned i = 0; i < TAP_BATCH && !held_full(d); i++) {
            ssize_t n = read(d->tap.qfd[k], buf, READ_MAX);
            if (n <= 0)
                break;
            held_push(d, buf, (unsigned)n);
        }
    }
}

static bool want_tap(const struct nf_dev *d, unsigned k)
{
    if (d->c.rec.state == SF_FAILED || (!d->cfg.shadow && d->c.phase != SFC_UP))
        return true; /* read and drop: nothing is held (failed, or no shadow) */
    if (d->c.phase == SFC_UP)
        return d->held_n == 0 && nf_conn_tx_room(d->ln.q[k % d->ln.nq], NF_MAX_SLOTS, 1);
    return !held_full(d);
}

/* Read and drop what the kernel queued (a failed device; no shadow and no
 * backend: what a NIC without a link does). */
static void drain_tap(struct nf_dev *d)
{
    for (unsigned k = 0; k < d->tap.nq; k++)
        for (unsigned i = 0; i < TAP_BATCH; i++) {
            if (read(d->tap.qfd[k], d->rdbuf, READ_MAX) <= 0)
                break;
            d->tx_drop_held++;
        }
}

static void harvest(struct nf_dev *d)
{
    char why[160];
    for (unsigned k = 0; k < d->ln.nq && d->c.phase == SFC_UP; k++) {
        struct nf_conn *c = d->ln.q[k];
        for (int round = 0; round < 8; round++) {
            RING_IDX tx0 = c->tx.rsp_cons, rx0 = c->rx.rsp_cons;
            int r = nf_conn_harvest(c, deliver, d, why, sizeof(why));
            bool tx = c->tx.rsp_cons != tx0, rx = c->rx.rsp_cons != rx0;
            if (sfc_replaying(&d->c)) {
                rp_mark(d, &d->rp.tx, tx);
                rp_mark(d, &d->rp.rx, rx);
            }
            if (r < 0) {
                if (d->ln.nq > 1)
                    sfc_fault(&d->c, SF_BAD_RESPONSE, "queue %u: %s", k, why);
                else
                    sfc_fault(&d->c, SF_BAD_RESPONSE, "%s", why);
                return;
            }
            if (tx || rx)
                sfc_alive(&d->c, sf_now_ms());
            if (r == 0)
                break;
        }
    }
}

static void check_deadline(struct nf_dev *d, uint64_t now)
{
    uint64_t age;
    if (!sfc_overdue(&d->c, now, &age))
        return;
    const struct nf_conn *c = d->ln.q[0];
    /* The oldest unanswered request is the probe (issued age ms ago). */
    bool by_probe = c->probe_out && c->txsince[c->probe_id] == now - age;
    sfc_fault(&d->c, SF_TIMEOUT, "%s unanswered for %" PRIu64 " ms (deadline %u ms)",
              by_probe ? "liveness probe (tx idle)" : "tx request", age, d->cfg.deadline_ms);
}

static void read_shadow(struct nf_dev *d, uint64_t now)
{
    struct nf_shadow s;
    d->next_read = now + d->cfg.poll_ms;
    if (nf_shadow_read(d->tap.name, &s, d->mctext, NF_MCAST_TEXT_MAX) < 0) {
        nf_log(d, false, "reading the configuration of %s: %m", d->tap.name);
        return;
    }
    if (d->have_shadow && !memcmp(&s, &d->sh, sizeof(s)))
        return;
    char a[96], b[96];
    nf_shadow_describe(&d->sh, a, sizeof(a));
    nf_shadow_describe(&s, b, sizeof(b));
    if (d->have_shadow)
        nf_log(d, true, "%s configuration: %s -> %s", d->tap.name, a, b);
    d->sh = s;
    d->have_shadow = true;
}

/* The replay's steps as they happen; done once the held frames are all on
 * the ring and the multicast list is answered. */
static void replay_step(struct nf_dev *d, uint64_t now)
{
    rp_mark(d, &d->rp.held, !d->held_n);
    rp_mark(d, &d->rp.mc, !d->ln.q[0]->tx_mcast_pending);
    if (!d->rp.held || !d->rp.mc)
        return;
    char steps[256] = "";
    if (d->c.rec.state == SF_RECOVERING) /* not the first connection's */
        snprintf(steps, sizeof(steps),
                 " (replay, ms after the restore: held frames on the ring %" PRIu64
                 ", first tx response %" PRId64 ", first rx %" PRId64
                 ", multicast list answered %" PRIu64 ")",
                 d->rp.held - 1, (int64_t)d->rp.tx - 1, (int64_t)d->rp.rx - 1, d->rp.mc - 1);
    sfc_replayed(&d->c, now, steps);
}

/* The driver's timeout, and the next read of the configuration. */
static int poll_timeout(const struct nf_dev *d, uint64_t now)
{
    uint64_t t = (uint64_t)sfc_timeout(&d->c, now, d->cfg.poll_ms);
    if (d->next_read <= now || (d->retired.nq && !(d->c.phase == SFC_UP && sfc_replaying(&d->c))))
        return 0;
    if (d->c.phase == SFC_UP && d->ln.feat.mcast && nf_probe_wait(&d->probe, now) < t)
        t = nf_probe_wait(&d->probe, now);
    if (d->next_read - now < t)
        t = d->next_read - now;
    if (d->neigh_restore_at) {
        uint64_t w = d->neigh_restore_at > now ? d->neigh_restore_at - now : 0;
        if (w < t)
            t = w;
    }
    return (int)t;
}

static void on_signal(struct nf_dev *d, int sigfd)
{
    struct signalfd_siginfo si;
    while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        nf_log(d, false, "signal %u: stopping", si.ssi_signo);
        d->stop = true;
    }
}

enum { P_SIG, P_EVTCHN, P_NL, P_CONN, P_TAP = P_CONN + SFC_NFDS };

int nf_dev_run(struct nf_dev *d, int sigfd)
{
    sfc_begin(&d->c);
    read_shadow(d, sf_now_ms());
    while (!d->stop) {
        uint64_t now = sf_now_ms();
        struct pollfd p[P_TAP + NF_MAX_QUEUES] = {
            [P_SIG] = {.fd = sigfd, .events = POLLIN},
            [P_EVTCHN] = {.fd = d->c.phase == SFC_UP || d->sb.nq ? xenevtchn_fd(d->xce) : -1,
                          .events = POLLIN},
            [P_NL] = {.fd = d->tap.nl, .events = POLLIN},
        };
        sfc_pollfds(&d->c, &p[P_CONN]);
        for (unsigned k = 0; k < d->tap.nq; k++)
            p[P_TAP + k] =
                (struct pollfd){.fd = want_tap(d, k) ? d->tap.qfd[k] : -1, .events = POLLIN};
        if (poll(p, P_TAP + d->tap.nq, poll_timeout(d, now)) < 0 && errno != EINTR) {
            nf_log(d, false, "poll: %m");
            usleep(10000);
        }
        now = sf_now_ms();
        if (p[P_SIG].revents & POLLIN)
            on_signal(d, sigfd);
        if (p[P_EVTCHN].revents & POLLIN)
            nf_conn_ack_event(d->xce); /* one handle: any queue's port, a standby's too */
        if ((p[P_NL].revents & POLLIN) && nf_tap_link_event(&d->tap))
            d->next_read = now;
        if (now >= d->next_read)
            read_shadow(d, now);
        sfc_step(&d->c, now);
        nf_standby_drain(d);
        if (d->c.phase == SFC_UP)
            harvest(d);
        now = sf_now_ms();
        check_deadline(d, now);
        if (d->c.phase == SFC_UP) {
            pump_tx(d, now);
            probe(d, now);
            for (unsigned k = 0; k < d->ln.nq; k++)
                nf_conn_push(d->ln.q[k]);
            /* The NIC's replay: held frames sent, multicast list answered. */
            if (sfc_replaying(&d->c))
                replay_step(d, now);
            neigh_step(d, now);
        } else if (d->c.rec.state == SF_FAILED || !d->cfg.shadow) {
            drain_tap(d);
        } else {
            hold_tx(d);
        }
        release_retired(d);
    }
    nf_log(d, false,
           "stopping: dropped tx %" PRIu64 " (no room to hold), %" PRIu64 " (too big), %" PRIu64
           " (offloads); rx %" PRIu64 " filtered, %" PRIu64 " (offloads), %" PRIu64
           " TAP write errors; liveness probes %" PRIu64 "; standby promotions %" PRIu64
           ", frames standbys received while held (dropped) %" PRIu64,
           d->tx_drop_held, d->tx_drop_big, d->tx_drop_off, d->rx_filtered, d->rx_drop_off,
           d->rx_tap_err, d->probe.sent, d->c.promotions, d->sb_rx_dropped);
    sfc_end(&d->c);
    return 0;
}

int nf_dev_open(struct nf_dev *d, const struct nf_config *cfg)
{
    memset(d, 0, sizeof(*d));
    d->cfg = *cfg;
    d->probe.idle_ms = cfg->probe_ms;
    d->tap.fd = d->tap.ctl = d->tap.nl = -1;
    d->held = calloc(cfg->max_held, sizeof(*d->held));
    d->unans = calloc(NF_TX_PAGES, sizeof(*d->unans));
    d->rdbuf = calloc(1, READ_MAX);
    d->mctext = calloc(1, NF_MCAST_TEXT_MAX);
    if (!d->held || !d->unans || !d->rdbuf || !d->mctext) {
        nf_log(d, false, "out of memory");
        return -1;
    }
    struct sfc_config cc = {
        .device = cfg->device, .deadline_ms = cfg->deadline_ms, .log = log_sink, .log_arg = d};
    if (sfc_open(&d->c, &nf_conn_ops, d, &cc) < 0)
        return -1;
    if (nf_read_fe_mac(&d->c.x, d->mac) < 0) {
        nf_log(d, false, "%s/mac: %s", cfg->device,
               errno == ENOENT ? "absent (the toolstack writes it)"
                               : "not a unicast MAC address xx:xx:xx:xx:xx:xx");
        return -1;
    }
    d->gs = xengntshr_open(NULL, 0);
    d->xce = xenevtchn_open(NULL, 0);
    if (!d->gs || !d->xce) {
        nf_log(d, false, "open %s: %m", !d->gs ? "gntalloc (xengntshr_open)" : "xenevtchn_open");
        return -1;
    }
    char msg[160];
    if (nf_tap_open(&d->tap, cfg->ifname, d->mac, cfg->queues, msg, sizeof(msg)) < 0) {
        nf_log(d, false, "TAP: %s", msg);
        return -1;
    }
    d->gso_bounded = nf_tap_gso_max(&d->tap, GSO_MAX_BYTES) == 0;
    if (cfg->offloads && !d->gso_bounded)
        nf_log(d, false, "%s: cannot bound its GSO packets to %u bytes (%m): no TSO offered",
               d->tap.name, GSO_MAX_BYTES);
    /* A persistent TAP may come with the budget a netfront killed during a
     * recovery left raised. */
    nf_neigh_init(&d->neigh, "/proc/sys/net", d->tap.name, neigh_log, d);
    nf_neigh_repair(&d->neigh);
    nf_log(d, false,
           "%s: TAP with MAC %02x:%02x:%02x:%02x:%02x:%02x, carrier off until connected%s",
           d->tap.name, d->mac[0], d->mac[1], d->mac[2], d->mac[3], d->mac[4], d->mac[5],
           cfg->shadow ? ""
                       : "; shadow off: no receive filter, no tx replay or holding, the "
                         "configuration not restored on a new backend");
    return 0;
}

void nf_dev_close(struct nf_dev *d)
{
    if (!d)
        return;
    nf_link_free(&d->sb);
    nf_link_free(&d->ln);
    nf_link_free(&d->retired);
    neigh_restore(d, "(stopping)");
    if (d->held)
        held_drop_all(d);
    free(d->held);
    d->held = NULL;
    free(d->unans);
    d->unans = NULL;
    free(d->rdbuf);
    d->rdbuf = NULL;
    free(d->mctext);
    d->mctext = NULL;
    nf_tap_close(&d->tap);
    if (d->xce)
        xenevtchn_close(d->xce);
    if (d->gs)
        xengntshr_close(d->gs);
    sfc_close(&d->c);
    d->xce = NULL;
    d->gs = NULL;
}
