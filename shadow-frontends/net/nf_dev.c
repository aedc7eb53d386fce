/* nf_dev.c - the shadow netfront's state machine: handshake, detection,
 * isolation, reconnection and restore around its connections, the TAP's
 * carrier, the tx held while there is no backend. */
#define _GNU_SOURCE
#include "nf_dev.h"

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

#define TICK_MS          50u  /* while tx requests are outstanding */
#define DOWN_TICK_MS     200u /* handshake re-evaluation while not connected */
#define SETUP_RETRY_MS   500u
#define MIN_HANDSHAKE_MS 5000u
#define HELD_MAX_BYTES   (4u << 20)
#define TAP_BATCH        64u /* frames read from the TAP per loop turn */
#define TOKEN_REL        "nf-release"
#define VNET             sizeof(struct virtio_net_hdr)
/* GSO packets the TAP may hand us: a frame of at most 65535 bytes. */
#define GSO_MAX_BYTES 65000u
/* A read of this many bytes may have been truncated. */
#define READ_MAX (VNET + NF_MAX_FRAME + 1)

void nf_log(const struct nf_dev *d, bool verbose_only, const char *fmt, ...)
{
    if (verbose_only && !d->cfg.verbose)
        return;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "understudy-netfront[%s]: %s\n", d->cfg.device, msg);
}

/* ---- publishing ---- */

static void publish(struct nf_dev *d, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void publish(struct nf_dev *d, const char *key, const char *fmt, ...)
{
    char val[SF_REPORT_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    if (sfx_write(&d->x, key, "%s", val) < 0)
        nf_log(d, false, "xenstore write %s/%s: %m", d->cfg.device, key);
}

static void set_fe_state(struct nf_dev *d, int state)
{
    if (sfx_set_state(&d->x, state) < 0)
        nf_log(d, false, "xenstore write %s/state (%s): %m", d->cfg.device, xsu_state_name(state));
}

static void carrier(struct nf_dev *d, bool on)
{
    if (nf_tap_carrier(&d->tap, on) < 0)
        nf_log(d, false, "TUNSETCARRIER %d on %s: %m", on, d->tap.name);
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
struct replay {
    struct nf_held f[NF_TX_PAGES];
    unsigned n;
};

static void collect_unanswered(void *arg, const struct virtio_net_hdr *vh, const uint8_t *frame,
                               unsigned len)
{
    struct replay *r = arg;
    if (r->n == NF_TX_PAGES)
        return;
    uint8_t *p = malloc(VNET + len);
    if (!p)
        return;
    memcpy(p, vh, VNET);
    memcpy(p + VNET, frame, len);
    r->f[r->n].data = p;
    r->f[r->n].len = VNET + len;
    r->n++;
}

static unsigned requeue_unanswered(struct nf_dev *d)
{
    static struct replay r;
    r.n = 0;
    for (unsigned k = 0; k < d->nq; k++)
        nf_conn_unanswered(d->q[k], collect_unanswered, &r);
    unsigned kept = 0;
    for (unsigned i = r.n; i-- > 0;) {
        if (d->held_n >= d->cfg.max_held) {
            free(r.f[i].data);
            d->tx_drop_held++;
            continue;
        }
        d->held_head = (d->held_head + d->cfg.max_held - 1) % d->cfg.max_held;
        d->held[d->held_head] = r.f[i];
        d->held_n++;
        d->held_bytes += r.f[i].len;
        kept++;
    }
    return kept;
}

/* ---- connection ---- */

/* The oldest unanswered tx request of any queue. */
static bool oldest_all(const struct nf_dev *d, uint64_t *since)
{
    bool any = false;
    for (unsigned k = 0; k < d->nq; k++) {
        uint64_t o = 0;
        if (nf_conn_oldest(d->q[k], &o) && (!any || o < *since)) {
            *since = o;
            any = true;
        }
    }
    return any;
}

static void free_queues(struct nf_dev *d)
{
    for (unsigned k = 0; k < NF_MAX_QUEUES; k++) {
        if (d->q[k]) {
            nf_conn_teardown(d->q[k]);
            free(d->q[k]);
            d->q[k] = NULL;
        }
    }
    d->nq = 0;
}

static void teardown(struct nf_dev *d)
{
    free_queues(d);
    nf_remove_transport(&d->x);
    d->hs = NF_HS_DOWN;
}

static void fault(struct nf_dev *d, enum sf_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fault(struct nf_dev *d, enum sf_kind kind, const char *fmt, ...)
{
    if (d->rec.state == SF_FAILED)
        return;
    char detail[SF_REPORT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    uint64_t now = sf_now_ms(), evidence = d->last_alive, oldest = 0;
    if (oldest_all(d, &oldest) && oldest > evidence)
        evidence = oldest;
    unsigned replay = d->cfg.shadow && d->nq && d->hs == NF_HS_UP ? requeue_unanswered(d) : 0;
    teardown(d);
    set_fe_state(d, XenbusStateClosed);
    carrier(d, false);
    /* Until the next backend says what it takes: partial checksums only
     * (which we can always complete). */
    if (d->cfg.offloads && nf_tap_offload(&d->tap, nf_off_tun_flags(&(struct nf_txcaps){0})) < 0)
        nf_log(d, false, "TUNSETOFFLOAD on %s: %m", d->tap.name);
    bool report = sfr_detect(&d->rec, kind, detail, now, evidence);
    if (d->rec.state == SF_CONNECTING) {
        nf_log(d, false, "connecting to backend %s (domain %u): %s: %s; retrying", d->x.be,
               d->x.be_id, sf_kind_name(kind), detail);
        d->hs_retry_at = now + SETUP_RETRY_MS;
        return;
    }
    if (report) {
        publish(d, USK_FE_REPORT, "%s", d->rec.report);
        publish(d, USK_FE_STATE, "%s", USK_STATE_RECOVERING);
    }
    nf_log(d, false,
           "backend %s (domain %u) failed: %s: %s; recovering, carrier off, %u frames held "
           "(%u of them unanswered by it; fault %u of this recovery)%s",
           d->x.be, d->x.be_id, sf_kind_name(kind), detail, d->held_n, replay, d->rec.faults,
           d->cfg.shadow ? "" : "; shadow off: tx is dropped until reconnected");
}

static void fail_device(struct nf_dev *d, const char *why)
{
    sfr_fail(&d->rec);
    teardown(d);
    carrier(d, false);
    held_drop_all(d);
    set_fe_state(d, XenbusStateClosed);
    publish(d, USK_FE_STATE, "%s", USK_STATE_FAILED);
    nf_log(d, false, "FAILED: %s; %s stays without carrier from now on", why, d->tap.name);
}

static unsigned handshake_ms(const struct nf_dev *d)
{
    return d->cfg.deadline_ms > MIN_HANDSHAKE_MS ? d->cfg.deadline_ms : MIN_HANDSHAKE_MS;
}

static void finish_replay(struct nf_dev *d, uint64_t now)
{
    sfr_replayed(&d->rec, now);
    publish(d, USK_FE_RECOVERIES, "%" PRIu64, d->rec.recoveries);
    publish(d, USK_FE_LAST_RECOVERY, "%s", d->rec.last);
    publish(d, USK_FE_STATE, "%s", USK_STATE_LIVE);
    nf_log(d, false, "recovered on backend %s (domain %u): %s; recovery %" PRIu64, d->x.be,
           d->x.be_id, d->rec.last, d->rec.recoveries);
}

static bool mtu_fits(const struct nf_dev *d)
{
    /* The largest frame: MTU plus Ethernet and VLAN headers. */
    unsigned frame = d->sh.mtu + NF_ETH_HLEN + 4;
    return frame <= (d->feat.sg ? NF_MAX_FRAME : NF_PAGE);
}

static int setup(struct nf_dev *d)
{
    const char *why;
    if (nf_read_features(&d->x, &d->feat, &why) < 0) {
        nf_log(d, false, "backend %s: %s: %m; retrying", d->x.be, why);
        return -1;
    }
    if (d->feat.has_mac && memcmp(d->feat.mac, d->mac, 6)) {
        fail_device(d, "the backend serves another NIC (its mac differs from ours)");
        return -1;
    }
    unsigned nq = d->cfg.queues < d->feat.max_queues ? d->cfg.queues : d->feat.max_queues;
    if (nq == 0)
        nq = 1;
    if (nq > d->tap.nq)
        nq = d->tap.nq;
    uint32_t tx_refs[NF_MAX_QUEUES], rx_refs[NF_MAX_QUEUES];
    unsigned ports[NF_MAX_QUEUES];
    for (unsigned k = 0; k < nq; k++) {
        d->q[k] = malloc(sizeof(*d->q[k]));
        if (!d->q[k]) {
            nf_log(d, false, "out of memory for a connection");
            return -1;
        }
        d->nq = k + 1;
        if (nf_conn_setup(d->q[k], d->gs, d->xce, d->x.be_id) < 0) {
            nf_log(d, false,
                   "queue %u: share rings and buffers with domain %u, bind a port: %m; retrying", k,
                   d->x.be_id);
            free(d->q[k]);
            d->q[k] = NULL;
            d->nq = k;
            return -1;
        }
        d->q[k]->track = d->cfg.shadow;
        tx_refs[k] = d->q[k]->tx_ref;
        rx_refs[k] = d->q[k]->rx_ref;
        ports[k] = d->q[k]->port;
    }
    d->filter_on = d->feat.mcast && nf_shadow_wants_filter(&d->sh);
    if (nf_write_transport(&d->x, nq, tx_refs, rx_refs, ports, d->filter_on, d->cfg.offloads) < 0) {
        nf_log(d, false, "xenstore: write the transport keys in %s: %m; retrying", d->cfg.device);
        return -1;
    }
    memset(&d->applied, 0, sizeof(d->applied));
    /* Without the shadow only the first backend is given the list; a new one
     * sees the changes made from now on, as if it had the list already. */
    if (!d->cfg.shadow && d->programmed)
        d->applied = d->sh;
    d->warned_static = false;
    return 0;
}

static void connected(struct nf_dev *d, uint64_t now)
{
    d->hs = NF_HS_UP;
    d->last_alive = now;
    char cfg[96];
    nf_shadow_describe(&d->sh, cfg, sizeof(cfg));
    if (!mtu_fits(d))
        nf_log(d, false,
               "the guest's MTU %u needs feature-sg, which backend %s does not offer: "
               "frames over one page are dropped",
               d->sh.mtu, d->x.be);
    d->caps = (struct nf_txcaps){0};
    unsigned tun = 0;
    if (d->cfg.offloads) {
        d->caps.csum6 = d->feat.csum6;
        d->caps.gso4 = d->feat.sg && d->feat.gso4 && d->gso_bounded;
        d->caps.gso6 = d->feat.sg && d->feat.gso6 && d->gso_bounded;
        tun = nf_off_tun_flags(&d->caps);
    }
    if (nf_tap_offload(&d->tap, tun) < 0)
        nf_log(d, false, "TUNSETOFFLOAD %#x on %s: %m", tun, d->tap.name);
    carrier(d, true);
    d->programmed = true;
    char feat[64];
    snprintf(feat, sizeof(feat), "%u queue%s, %s, tx offloads%s%s%s", d->nq, d->nq > 1 ? "s" : "",
             d->feat.sg ? "sg" : "no sg", tun ? " csum" : " none", d->caps.gso4 ? " tso4" : "",
             d->caps.gso6 && d->caps.csum6 ? " tso6" : "");
    const char *mc = !d->feat.mcast ? "no multicast control"
                     : d->filter_on ? "multicast filter on"
                                    : "multicast filter off (promisc/allmulti)";
    if (d->rec.state == SF_CONNECTING) {
        sfr_connected(&d->rec, now);
        publish(d, USK_FE_RECOVERIES, "%" PRIu64, d->rec.recoveries);
        publish(d, USK_FE_STATE, "%s", USK_STATE_LIVE);
        nf_log(d, false, "connected to backend %s (domain %u): %s, %s; %s carrier on; %s", d->x.be,
               d->x.be_id, feat, mc, d->tap.name, cfg);
        return;
    }
    sfr_connected(&d->rec, now);
    if (!d->cfg.shadow) {
        nf_log(d, false,
               "reconnected to backend %s (domain %u): %s, %s; shadow off: %s not restored, "
               "nothing held",
               d->x.be, d->x.be_id, feat, mc, cfg);
        return;
    }
    nf_log(d, false,
           "reconnected to backend %s (domain %u): %s, %s; restoring %s, sending %u held frames",
           d->x.be, d->x.be_id, feat, mc, cfg, d->held_n);
}

static void drive_handshake(struct nf_dev *d, uint64_t now)
{
    if (d->rec.state == SF_FAILED)
        return;
    if (!d->x.be[0] && sfx_read_backend(&d->x) < 0)
        return; /* the toolstack has not written the device dir yet */
    int st = sfx_backend_state(&d->x);
    if (d->hs == NF_HS_DOWN) {
        if (st == XenbusStateInitWait) {
            if (now < d->hs_retry_at)
                return;
            if (setup(d) < 0) {
                if (d->rec.state == SF_FAILED)
                    return;
                teardown(d);
                d->hs_retry_at = now + SETUP_RETRY_MS;
                return;
            }
            d->hs = NF_HS_SETUP;
            d->hs_since = now;
            /* As Linux netfront: Connected once the keys are written; the
             * backend connects when it sees it. */
            set_fe_state(d, XenbusStateConnected);
        } else if (st == XenbusStateClosed) {
            set_fe_state(d, XenbusStateInitialising); /* ask it back to InitWait */
        } else if (st == XenbusStateConnected && d->rec.state == SF_CONNECTING && !d->asked_close) {
            nf_log(d, false, "backend %s is still Connected to an earlier frontend; closing",
                   d->x.be);
            set_fe_state(d, XenbusStateClosed);
            d->asked_close = true;
        }
        return;
    }
    if (d->hs != NF_HS_SETUP)
        return;
    if (st == XenbusStateConnected) {
        connected(d, now);
    } else if (st == XenbusStateInitWait || st == XenbusStateInitialised) {
        if (now - d->hs_since > handshake_ms(d)) {
            nf_log(d, false, "backend %s (domain %u) did not connect within %u ms; retrying",
                   d->x.be, d->x.be_id, handshake_ms(d));
            teardown(d);
            set_fe_state(d, XenbusStateClosed);
        }
    } else {
        nf_log(d, false, "backend %s went %s during the handshake; retrying", d->x.be,
               st < 0 ? "away" : xsu_state_name(st));
        teardown(d);
        set_fe_state(d, XenbusStateClosed);
        d->hs_retry_at = now + SETUP_RETRY_MS;
    }
}

static void monitor_backend(struct nf_dev *d)
{
    int st = sfx_backend_state(&d->x);
    if (st == XenbusStateConnected)
        return;
    if (st < 0 && errno == ENOENT)
        fault(d, SF_BACKEND_VANISHED, "backend dir %s is gone", d->x.be);
    else if (st < 0)
        fault(d, SF_BACKEND_VANISHED, "backend state %s/state unreadable: %s", d->x.be,
              strerror(errno));
    else if (st == XenbusStateClosing || st == XenbusStateClosed)
        fault(d, SF_BACKEND_CLOSED, "backend went %s unasked", xsu_state_name(st));
    else
        fault(d, SF_BACKEND_RESTARTED, "backend went back to %s", xsu_state_name(st));
}

static void on_generation(struct nf_dev *d)
{
    uint64_t g;
    if (sfx_read_generation(&d->x, &g) < 0) {
        nf_log(d, false, "xenstore read %s/%s: %m", d->cfg.device, USK_FE_GENERATION);
        return;
    }
    if (g <= d->gen)
        return;
    d->gen = g;
    if (sfx_read_backend(&d->x) < 0) {
        nf_log(d, false, "generation %" PRIu64 ": cannot use %s/backend and backend-id: %m", g,
               d->cfg.device);
        return;
    }
    nf_log(d, false, "generation %" PRIu64 ": backend is now %s (domain %u)", g, d->x.be,
           d->x.be_id);
    if (d->hs == NF_HS_UP)
        fault(d, SF_BACKEND_RESTARTED, "rewired by the toolstack to %s (generation %" PRIu64 ")",
              d->x.be, g);
    else if (d->hs == NF_HS_SETUP)
        teardown(d);
    if (d->rec.state != SF_FAILED) {
        set_fe_state(d, XenbusStateInitialising);
        d->hs_retry_at = 0;
    }
}

/* A domain went away somewhere: is it our backend's? */
static void on_release(struct nf_dev *d)
{
    if (d->hs == NF_HS_DOWN || !d->xs_rel)
        return;
    errno = 0;
    if (!xs_is_domain_introduced(d->xs_rel, d->x.be_id) && errno == 0)
        fault(d, SF_BACKEND_VANISHED, "driver domain %u is gone (@releaseDomain)", d->x.be_id);
}

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
    if (rawlen < VNET + NF_ETH_HLEN || rawlen >= READ_MAX) {
        d->tx_drop_big++;
        return true;
    }
    struct virtio_net_hdr h;
    memcpy(&h, raw, VNET);
    uint8_t *f = raw + VNET;
    unsigned len = rawlen - VNET;
    if (len > (d->feat.sg ? NF_MAX_FRAME : NF_PAGE)) {
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
    if (!d->feat.mcast)
        return;
    for (unsigned i = 0; i < d->sh.nmc && nf_conn_tx_room(d->q[0], 1, 1); i++) {
        if (nf_shadow_has(&d->applied, d->sh.mc[i]) || d->applied.nmc >= NF_MCAST_MAX)
            continue;
        nf_conn_tx_mcast(d->q[0], XEN_NETIF_EXTRA_TYPE_MCAST_ADD, d->sh.mc[i], now);
        memcpy(d->applied.mc[d->applied.nmc++], d->sh.mc[i], 6);
    }
    for (unsigned i = 0; i < d->applied.nmc && nf_conn_tx_room(d->q[0], 1, 1);) {
        if (nf_shadow_has(&d->sh, d->applied.mc[i])) {
            i++;
            continue;
        }
        nf_conn_tx_mcast(d->q[0], XEN_NETIF_EXTRA_TYPE_MCAST_DEL, d->applied.mc[i], now);
        memcpy(d->applied.mc[i], d->applied.mc[--d->applied.nmc], 6);
    }
    bool want = nf_shadow_wants_filter(&d->sh);
    if (want == d->filter_on)
        return;
    if (d->feat.mcast_dynamic) {
        if (nf_write_mcast_request(&d->x, want) == 0)
            d->filter_on = want;
    } else if (!d->warned_static) {
        nf_log(d, false,
               "backend %s samples request-multicast-control at connect only: its multicast "
               "filter stays %s until the next connection",
               d->x.be, d->filter_on ? "on" : "off");
        d->warned_static = true;
    }
}

static void pump_tx(struct nf_dev *d, uint64_t now)
{
    sync_mcast(d, now);
    while (d->held_n) {
        struct nf_held *h = &d->held[d->held_head];
        if (!tx_one(d, d->q[0], h->data, h->len, now))
            return;
        free(h->data);
        d->held_bytes -= h->len;
        d->held_head = (d->held_head + 1) % d->cfg.max_held;
        d->held_n--;
    }
    /* Each TAP queue feeds one ring (more TAP queues than rings share them). */
    static uint8_t buf[READ_MAX];
    for (unsigned k = 0; k < d->tap.nq; k++) {
        struct nf_conn *c = d->q[k % d->nq];
        for (unsigned i = 0; i < TAP_BATCH && nf_conn_tx_room(c, NF_MAX_SLOTS, 1); i++) {
            ssize_t n = read(d->tap.qfd[k], buf, sizeof(buf));
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

/* No backend: hold what the kernel had queued, up to the bound. */
static void hold_tx(struct nf_dev *d)
{
    static uint8_t buf[READ_MAX];
    for (unsigned k = 0; k < d->tap.nq; k++) {
        for (unsigned i = 0; i < TAP_BATCH && !held_full(d); i++) {
            ssize_t n = read(d->tap.qfd[k], buf, sizeof(buf));
            if (n <= 0)
                break;
            held_push(d, buf, (unsigned)n);
        }
    }
}

static bool want_tap(const struct nf_dev *d, unsigned k)
{
    if (d->rec.state == SF_FAILED || (!d->cfg.shadow && d->hs != NF_HS_UP))
        return true; /* read and drop: nothing is held (failed, or no shadow) */
    if (d->hs == NF_HS_UP)
        return d->held_n == 0 && nf_conn_tx_room(d->q[k % d->nq], NF_MAX_SLOTS, 1);
    return !held_full(d);
}

/* Read and drop what the kernel queued (a failed device; no shadow and no
 * backend: what a NIC without a link does). */
static void drain_tap(struct nf_dev *d)
{
    static uint8_t buf[READ_MAX];
    for (unsigned k = 0; k < d->tap.nq; k++)
        for (unsigned i = 0; i < TAP_BATCH; i++) {
            if (read(d->tap.qfd[k], buf, sizeof(buf)) <= 0)
                break;
            d->tx_drop_held++;
        }
}

static void harvest(struct nf_dev *d)
{
    char why[160];
    for (unsigned k = 0; k < d->nq && d->hs == NF_HS_UP; k++) {
        struct nf_conn *c = d->q[k];
        for (int round = 0; round < 8; round++) {
            uint64_t before = c->tx.rsp_cons + c->rx.rsp_cons;
            int r = nf_conn_harvest(c, deliver, d, why, sizeof(why));
            if (r < 0) {
                if (d->nq > 1)
                    fault(d, SF_BAD_RESPONSE, "queue %u: %s", k, why);
                else
                    fault(d, SF_BAD_RESPONSE, "%s", why);
                return;
            }
            if (c->tx.rsp_cons + c->rx.rsp_cons != before)
                d->last_alive = sf_now_ms();
            if (r == 0)
                break;
        }
    }
}

static void check_deadline(struct nf_dev *d, uint64_t now)
{
    uint64_t oldest = 0;
    if (!oldest_all(d, &oldest) || now - oldest < d->cfg.deadline_ms)
        return;
    fault(d, SF_TIMEOUT, "tx request unanswered for %" PRIu64 " ms (deadline %u ms)", now - oldest,
          d->cfg.deadline_ms);
}

static void read_shadow(struct nf_dev *d, uint64_t now)
{
    struct nf_shadow s;
    d->next_read = now + d->cfg.poll_ms;
    if (nf_shadow_read(d->tap.name, &s) < 0) {
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

static int poll_timeout(const struct nf_dev *d, uint64_t now)
{
    uint64_t t = d->hs == NF_HS_UP ? d->cfg.poll_ms : DOWN_TICK_MS;
    uint64_t oldest = 0;
    if (d->hs == NF_HS_UP && oldest_all(d, &oldest)) {
        uint64_t due = oldest + d->cfg.deadline_ms;
        uint64_t left = due > now ? due - now : 0;
        if (left < t)
            t = left;
        if (t > TICK_MS)
            t = TICK_MS;
    }
    if (d->next_read > now && d->next_read - now < t)
        t = d->next_read - now;
    else if (d->next_read <= now)
        t = 0;
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

int nf_dev_run(struct nf_dev *d, int sigfd)
{
    if (sfx_read_generation(&d->x, &d->gen) < 0)
        d->gen = 0;
    if (sfx_read_backend(&d->x) < 0)
        nf_log(d, false, "cannot use %s/backend and backend-id (%m); waiting", d->cfg.device);
    set_fe_state(d, XenbusStateInitialising);
    read_shadow(d, sf_now_ms());
    while (!d->stop) {
        uint64_t now = sf_now_ms();
        struct pollfd p[5 + NF_MAX_QUEUES] = {
            {.fd = sigfd, .events = POLLIN},
            {.fd = sfx_fd(&d->x), .events = POLLIN},
            {.fd = d->hs == NF_HS_UP ? xenevtchn_fd(d->xce) : -1, .events = POLLIN},
            {.fd = d->tap.nl, .events = POLLIN},
            {.fd = d->xs_rel ? xs_fileno(d->xs_rel) : -1, .events = POLLIN},
        };
        for (unsigned k = 0; k < d->tap.nq; k++)
            p[5 + k] = (struct pollfd){.fd = want_tap(d, k) ? d->tap.qfd[k] : -1, .events = POLLIN};
        if (poll(p, 5 + d->tap.nq, poll_timeout(d, now)) < 0 && errno != EINTR) {
            nf_log(d, false, "poll: %m");
            usleep(10000);
        }
        now = sf_now_ms();
        if (p[0].revents & POLLIN)
            on_signal(d, sigfd);
        if (p[2].revents & POLLIN)
            nf_conn_ack_event(d->q[0]); /* one handle: any queue's port */
        if ((p[3].revents & POLLIN) && nf_tap_link_event(&d->tap))
            d->next_read = now;
        if (now >= d->next_read)
            read_shadow(d, now);
        unsigned ev = sfx_events(&d->x);
        if (ev & SFX_EV_GENERATION)
            on_generation(d);
        if (d->hs == NF_HS_UP && (ev & SFX_EV_BACKEND))
            monitor_backend(d);
        if (p[4].revents & POLLIN) {
            char **w;
            bool rel = false;
            for (int i = 0; i < 256 && (w = xs_check_watch(d->xs_rel)) != NULL; i++) {
                rel = true;
                free(w);
            }
            if (rel)
                on_release(d);
        }
        if (d->hs != NF_HS_UP)
            drive_handshake(d, now);
        if (d->hs == NF_HS_UP)
            harvest(d);
        now = sf_now_ms();
        if (d->hs == NF_HS_UP)
            check_deadline(d, now);
        if (d->hs == NF_HS_UP) {
            pump_tx(d, now);
            for (unsigned k = 0; k < d->nq; k++)
                nf_conn_push(d->q[k]);
            if (d->rec.replaying && !d->held_n && !d->q[0]->tx_mcast_pending)
                finish_replay(d, now);
        } else if (d->rec.state == SF_FAILED || !d->cfg.shadow) {
            drain_tap(d);
        } else {
            hold_tx(d);
        }
    }
    teardown(d);
    set_fe_state(d, XenbusStateClosed);
    return 0;
}

int nf_dev_open(struct nf_dev *d, const struct nf_config *cfg)
{
    memset(d, 0, sizeof(*d));
    d->cfg = *cfg;
    d->tap.fd = d->tap.ctl = d->tap.nl = -1;
    sfr_init(&d->rec);
    d->held = calloc(cfg->max_held, sizeof(*d->held));
    if (!d->held) {
        nf_log(d, false, "out of memory");
        return -1;
    }
    if (sfx_open(&d->x, cfg->device) < 0) {
        nf_log(d, false, "xenstore: open and watch %s/%s: %m", cfg->device, USK_FE_GENERATION);
        return -1;
    }
    d->x_open = true;
    if (nf_read_fe_mac(&d->x, d->mac) < 0) {
        nf_log(d, false, "%s/mac: %s", cfg->device,
               errno == ENOENT ? "absent (the toolstack writes it)"
                               : "not a unicast MAC address xx:xx:xx:xx:xx:xx");
        return -1;
    }
    d->xs_rel = xs_open(0);
    if (d->xs_rel && !xs_watch(d->xs_rel, "@releaseDomain", TOKEN_REL)) {
        nf_log(d, true, "watch @releaseDomain: %m (domain death is seen through the backend dir)");
        xs_close(d->xs_rel);
        d->xs_rel = NULL;
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
    free_queues(d);
    if (d->held)
        held_drop_all(d);
    free(d->held);
    d->held = NULL;
    nf_tap_close(&d->tap);
    if (d->xce)
        xenevtchn_close(d->xce);
    if (d->gs)
        xengntshr_close(d->gs);
    if (d->xs_rel)
        xs_close(d->xs_rel);
    if (d->x_open)
        sfx_close(&d->x);
    d->xce = NULL;
    d->gs = NULL;
    d->xs_rel = NULL;
    d->x_open = false;
}
