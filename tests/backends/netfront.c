/* netfront - the netif test frontend's command line: connect to a vif and
 * run a script of commands, one line of output each ("ok: ..."), exit 1 at
 * the first failure ("FAIL: ...").
 *
 *   netfront [OPTIONS] FE-DIR CMD...
 *
 * Options: --queues N --split --no-sg --no-gso --no-csum --no-csum6
 *          --mcast-control --rx-bufs N --timeout SEC --no-rx-copy
 *          --no-rx-notify --bogus-ring --ip A.B.C.D --peer-ip A.B.C.D --peer-mac MAC
 *          --ip6 ADDR --peer-ip6 ADDR --src-mac MAC (frames from another MAC: spoofing)
 * Commands:
 *   connect | reconnect | close | drop
 *   await-restart            wait for the backend to restart (InitWait), reconnect
 *   udp PORT SIZE COUNT [SLOTS]      COUNT UDP frames to the peer, full checksums
 *   udp-partial PORT SIZE COUNT [SLOTS]  ... with NETTXF_csum_blank (partial checksums)
 *   udp6 / udp6-partial ...          the same over IPv6 (--ip6, --peer-ip6)
 *   tcp-gso PORT SIZE MSS [SEQ]      one TCP frame of SIZE payload bytes with a GSO extra
 *   expect-udp PORT COUNT            receive COUNT UDP frames to us, every byte checked
 *   expect-udp6 PORT COUNT           the same over IPv6
 *   expect-tcp PORT BYTES            receive TCP stream bytes [0, BYTES) to PORT, checked
 *   expect-to MAC N                  receive N frames addressed to MAC
 *   expect-none-to MAC MS            no frame addressed to MAC for MS
 *   count-rx MS                      receive for MS, print the count per destination MAC
 *   mcast-add MAC [STATUS] | mcast-del MAC [STATUS]
 *   bad KIND | bad-all               malformed tx packets (nbad.c): ERROR/NULL answers
 *   split-push                       a 3-slot packet pushed in two halves: answered OKAY
 *   garbage-index                    push tx req_prod far past the ring: backend must close
 *   endless                          a full ring of more_data slots: backend must close
 *   blast PORT BYTES SIZE            send BYTES in UDP frames of SIZE, report the rate
 *   corrupt N                        N frames: each answer must be corrupt
 *   no-answer MS | await-answer MS | latency-at-least MS
 *   wait-file PATH | sleep MS | stats
 */
#define _GNU_SOURCE
#include "nbad.h"
#include "nframe.h"
#include "nfront.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xen/io/xenbus.h>

static struct nf *T;
static struct nf_opts O;
/* IPv6: fd00:99::2 (us) and fd00:99::1 (the peer) unless given. */
static struct nfr_end me = {
    .ip = {10, 99, 0, 2}, .ip6 = {0xfd, 0, 0, 0x99, [15] = 2}, .port = 4000};
static uint8_t src_mac[6];
static bool src_mac_set;
static struct nfr_end peer = {.mac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
                              .ip = {10, 99, 0, 1},
                              .ip6 = {0xfd, 0, 0, 0x99, [15] = 1}};

#define FAILF(...)                                                                                 \
    do {                                                                                           \
        printf("FAIL: " __VA_ARGS__);                                                              \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        exit(1);                                                                                   \
    } while (0)

static uint64_t num(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || errno)
        FAILF("'%s' is not a number", s);
    return v;
}

static void mac_arg(const char *s, uint8_t m[6])
{
    if (nfr_parse_mac(s, m) < 0)
        FAILF("'%s' is not a MAC address", s);
}

static void need(int argc, int i, int n, const char *cmd)
{
    if (i + n >= argc)
        FAILF("%s needs %d argument(s)", cmd, n);
}

/* Even slots over a frame of len bytes; slot k starts at offset (k * 200) % 1024. */
static unsigned make_slots(unsigned len, unsigned n, struct nf_slot *s)
{
    unsigned pos = 0;
    for (unsigned k = 0; k < n; k++) {
        unsigned left = len - pos, want = k + 1 == n ? left : len / n;
        s[k].off = (uint16_t)((k * 200) % 1024);
        if (want > NF_PAGE - s[k].off)
            s[k].off = 0;
        if (want > NF_PAGE)
            FAILF("a slot of %u bytes: more slots needed", want);
        s[k].len = (uint16_t)want;
        pos += want;
    }
    return n;
}

static uint8_t frame[NF_MAX_PKT];

static void send_udp(unsigned port, unsigned size, unsigned count, unsigned nslots, bool partial,
                     bool v6)
{
    peer.port = (uint16_t)port;
    struct nf_slot sl[32];
    if (nslots == 0 || nslots > 32)
        FAILF("1..32 slots");
    uint64_t ok0 = T->txs.ok;
    for (unsigned i = 0; i < count; i++) {
        size_t len = v6 ? nfr_udp6(frame, sizeof(frame), &me, &peer, i, size, partial)
                        : nfr_udp(frame, sizeof(frame), &me, &peer, i, size, partial);
        if (!len)
            FAILF("a UDP frame of %u bytes payload does not fit", size);
        make_slots((unsigned)len, nslots, sl);
        unsigned q = T->next_q++ % T->nq;
        if (nf_send(T, q, frame, (unsigned)len, sl, nslots, partial ? NETTXF_csum_blank : 0, NULL,
                    0) < 0)
            FAILF("sending UDP frame %u: %s", i, T->err);
    }
    if (nf_tx_drain(T, O.timeout_ms) < 0)
        FAILF("udp: %s", T->err);
    uint64_t ok = T->txs.ok - ok0;
    if (ok != (uint64_t)count * nslots)
        FAILF("udp: %llu of %u slots answered OKAY (error %llu dropped %llu)",
              (unsigned long long)ok, count * nslots, (unsigned long long)T->txs.error,
              (unsigned long long)T->txs.dropped);
    printf("ok: sent %u UDP%s frames of %u bytes in %u slot(s)%s\n", count, v6 ? "/IPv6" : "", size,
           nslots, partial ? ", partial checksums" : "");
}

static void tcp_gso(unsigned port, unsigned size, unsigned mss, uint32_t seq)
{
    peer.port = (uint16_t)port;
    size_t len = nfr_tcp(frame, sizeof(frame), &me, &peer, seq, size);
    if (!len)
        FAILF("a TCP frame of %u bytes does not fit", size);
    struct nf_slot sl[32];
    unsigned n = (unsigned)((len + NF_PAGE - 1) / NF_PAGE);
    make_slots((unsigned)len, n, sl);
    netif_extra_info_t x;
    memset(&x, 0, sizeof(x));
    x.type = XEN_NETIF_EXTRA_TYPE_GSO;
    x.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
    x.u.gso.size = (uint16_t)mss;
    uint64_t ok0 = T->txs.ok;
    if (nf_send(T, 0, frame, (unsigned)len, sl, n, NETTXF_csum_blank, &x, 1) < 0 ||
        nf_tx_drain(T, O.timeout_ms) < 0)
        FAILF("tcp-gso: %s", T->err);
    if (T->txs.ok - ok0 != n)
        FAILF("tcp-gso: %llu of %u slots answered OKAY", (unsigned long long)(T->txs.ok - ok0), n);
    printf("ok: sent a GSO TCP frame of %u payload bytes (mss %u) in %u slots\n", size, mss, n);
}

static bool to_me(const struct nf_pkt *p)
{
    return p->len >= 6 && !memcmp(p->data, T->mac, 6);
}

static void expect_udp(unsigned port, unsigned count, bool v6)
{
    unsigned got = 0, partial = 0, maxslots = 0, queues = 0;
    uint64_t end = nf_now_ms() + O.timeout_ms;
    while (got < count) {
        struct nf_pkt p;
        uint64_t now = nf_now_ms();
        int r = now < end ? nf_recv(T, &p, (unsigned)(end - now)) : 0;
        if (r < 0)
            FAILF("expect-udp: %s", T->err);
        if (r == 0)
            FAILF("expect-udp: %u of %u frames to port %u after %u ms", got, count, port,
                  O.timeout_ms);
        struct nfr_info in;
        if (to_me(&p) && nfr_parse(p.data, p.len, &in) == 0 && in.proto == 17 && in.dport == port &&
            in.ipver == (v6 ? 6u : 4u)) {
            uint32_t seq;
            bool blank = p.flags & NETRXF_csum_blank;
            if (!in.ip_ok || (!blank && !in.l4_csum_ok))
                FAILF("expect-udp: frame %u has a bad checksum (flags %#x)", got, p.flags);
            if (!nfr_payload_ok(in.payload, in.paylen, &seq))
                FAILF("expect-udp: frame %u (%zu bytes) has the wrong payload", got, in.paylen);
            got++;
            partial += blank;
            queues |= 1u << p.queue;
            if (p.slots > maxslots)
                maxslots = p.slots;
        }
        free(p.data);
    }
    printf("ok: received %u UDP%s frames to port %u (up to %u slots, %u with csum_blank) on %d "
           "queue(s)\n",
           got, v6 ? "/IPv6" : "", port, maxslots, partial, __builtin_popcount(queues));
}

static void expect_tcp(unsigned port, uint64_t bytes)
{
    uint8_t *seen = calloc(bytes ? bytes : 1, 1);
    uint64_t have = 0;
    unsigned frames = 0, gso = 0, maxlen = 0;
    uint64_t end = nf_now_ms() + O.timeout_ms;
    while (have < bytes) {
        struct nf_pkt p;
        uint64_t now = nf_now_ms();
        int r = now < end ? nf_recv(T, &p, (unsigned)(end - now)) : 0;
        if (r <= 0)
            FAILF("expect-tcp: %llu of %llu bytes after %u ms: %s", (unsigned long long)have,
                  (unsigned long long)bytes, O.timeout_ms, r < 0 ? T->err : "timeout");
        struct nfr_info in;
        if (to_me(&p) && nfr_parse(p.data, p.len, &in) == 0 && in.proto == 6 && in.dport == port) {
            frames++;
            if (p.gso_type) {
                gso++;
                if (p.gso_type != XEN_NETIF_GSO_TYPE_TCPV4 || !p.gso_size)
                    FAILF("expect-tcp: GSO extra type %u size %u", p.gso_type, p.gso_size);
            }
            if (!(p.flags & NETRXF_csum_blank) && !in.l4_csum_ok)
                FAILF("expect-tcp: bad TCP checksum");
            if (p.len > maxlen)
                maxlen = p.len;
            for (size_t i = 0; i < in.paylen; i++) {
                uint64_t off = (uint64_t)(in.tcpseq - 1000u) + i;
                if (off >= bytes || in.payload[i] != nfr_stream_byte(in.tcpseq + i))
                    FAILF("expect-tcp: wrong stream byte at seq %u", (unsigned)(in.tcpseq + i));
                have += !seen[off];
                seen[off] = 1;
            }
        }
        free(p.data);
    }
    free(seen);
    printf("ok: received %llu TCP stream bytes in %u frames (%u with a GSO extra, largest %u)\n",
           (unsigned long long)bytes, frames, gso, maxlen);
}

static unsigned count_to(const uint8_t mac[6], unsigned want, unsigned ms)
{
    unsigned got = 0;
    uint64_t end = nf_now_ms() + ms;
    while (got < want) {
        struct nf_pkt p;
        uint64_t now = nf_now_ms();
        if (now >= end)
            break;
        int r = nf_recv(T, &p, (unsigned)(end - now));
        if (r < 0)
            FAILF("receiving: %s", T->err);
        if (r == 0)
            break;
        got += p.len >= 6 && !memcmp(p.data, mac, 6);
        free(p.data);
    }
    return got;
}

/* Everything received for ms, counted by destination MAC: "ok: rx MAC=N ...". */
static void count_rx(unsigned ms)
{
    enum { MAX_DST = 16 };
    uint8_t dst[MAX_DST][6];
    unsigned n[MAX_DST], ndst = 0, other = 0;
    uint64_t end = nf_now_ms() + ms;
    for (;;) {
        uint64_t now = nf_now_ms();
        if (now >= end)
            break;
        struct nf_pkt p;
        int r = nf_recv(T, &p, (unsigned)(end - now));
        if (r < 0)
            FAILF("count-rx: %s", T->err);
        if (r == 0)
            break;
        unsigned k = 0;
        while (k < ndst && (p.len < 6 || memcmp(dst[k], p.data, 6)))
            k++;
        if (p.len < 6) {
            other++;
        } else if (k < ndst) {
            n[k]++;
        } else if (ndst < MAX_DST) {
            memcpy(dst[ndst], p.data, 6);
            n[ndst++] = 1;
        } else {
            other++;
        }
        free(p.data);
    }
    printf("ok: rx");
    for (unsigned k = 0; k < ndst; k++)
        printf(" %02x:%02x:%02x:%02x:%02x:%02x=%u", dst[k][0], dst[k][1], dst[k][2], dst[k][3],
               dst[k][4], dst[k][5], n[k]);
    printf(" other=%u\n", other);
}

static void mcast(bool add, const char *macs, int want)
{
    uint8_t m[6];
    mac_arg(macs, m);
    int st = nf_mcast(T, add, m);
    if (st == -100)
        FAILF("mcast: %s", T->err);
    if (st != want)
        FAILF("multicast %s %s: status %d, want %d", add ? "add" : "del", macs, st, want);
    printf("ok: multicast %s %s -> status %d\n", add ? "add" : "del", macs, st);
}

static void bad(const char *kind)
{
    int r = nbad_send(T, kind, &me, &peer);
    if (r == -2)
        FAILF("unknown bad request kind '%s'", kind);
    if (r < 0)
        FAILF("bad %s: %s", kind, T->err);
    printf("ok: bad %s -> every slot answered ERROR/NULL\n", kind);
}

static void one_frame_raw(uint16_t page, netif_tx_request_t *r)
{
    size_t len = nfr_udp(frame, sizeof(frame), &me, &peer, page, 100, false);
    memcpy(nf_txpage(T, 0, page), frame, len);
    memset(r, 0, sizeof(*r));
    r->gref = T->q[0].txrefs[page];
    r->id = page;
    r->size = (uint16_t)len;
}

static void split_push(void)
{
    if (nf_tx_drain(T, O.timeout_ms) < 0)
        FAILF("split-push: %s", T->err);
    size_t len = nfr_udp(frame, sizeof(frame), &me, &peer, 1, 1200, false);
    netif_tx_request_t r[3];
    memset(r, 0, sizeof(r));
    for (unsigned k = 0; k < 3; k++) {
        unsigned n = k < 2 ? 400 : (unsigned)len - 800;
        memcpy(nf_txpage(T, 0, k), frame + k * 400, n);
        r[k].gref = T->q[0].txrefs[k];
        r[k].id = (uint16_t)k;
        r[k].size = (uint16_t)(k == 0 ? len : n);
        r[k].flags = k < 2 ? NETTXF_more_data : 0;
    }
    nf_push_raw(T, 0, r, 2);
    netif_tx_response_t rsp[3];
    if (nf_collect(T, 0, 1, 300, rsp) == 0)
        FAILF("split-push: an answer before the packet's last slot was posted");
    nf_push_raw(T, 0, r + 2, 1);
    if (nf_collect(T, 0, 3, O.timeout_ms, rsp) < 0)
        FAILF("split-push: %s", T->err);
    for (unsigned k = 0; k < 3; k++)
        if (rsp[k].status != NETIF_RSP_OKAY)
            FAILF("split-push: slot answer %u status %d", k, rsp[k].status);
    printf("ok: a packet pushed in two halves was sent whole\n");
}

static void must_close(const char *what)
{
    int st =
        nf_wait_state(T, T->be, 1u << XenbusStateClosing | 1u << XenbusStateClosed, O.timeout_ms);
    if (st < 0)
        FAILF("%s: backend did not close: %s", what, T->err);
    printf("ok: %s -> backend state %d\n", what, st);
}

static void garbage_index(void)
{
    struct nf_queue *q = &T->q[0];
    q->tx.sring->req_prod = q->tx.req_prod_pvt + 100000;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    nf_notify_tx(T, 0);
    must_close("garbage index");
}

static void endless(void)
{
    struct nf_queue *q = &T->q[0];
    if (nf_tx_drain(T, O.timeout_ms) < 0)
        FAILF("endless: %s", T->err);
    for (unsigned i = 0; i < RING_SIZE(&q->tx); i++) {
        netif_tx_request_t r;
        one_frame_raw((uint16_t)(i % NF_TX_PAGES), &r);
        r.flags = NETTXF_more_data;
        *RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt++) = r;
    }
    RING_PUSH_REQUESTS(&q->tx);
    nf_notify_tx(T, 0);
    must_close("a packet that never ends");
}

static void blast(unsigned port, uint64_t bytes, unsigned size)
{
    peer.port = (uint16_t)port;
    uint64_t t0 = nf_now_ms(), sent = 0;
    uint32_t seq = 0;
    while (sent < bytes) {
        size_t len = nfr_udp(frame, sizeof(frame), &me, &peer, seq++, size, false);
        if (!len || len > NF_PAGE)
            FAILF("blast: frames of one page at most");
        if (nf_send(T, T->next_q++ % T->nq, frame, (unsigned)len, NULL, 0, 0, NULL, 0) < 0)
            FAILF("blast: %s", T->err);
        sent += len;
    }
    if (nf_tx_drain(T, O.timeout_ms) < 0)
        FAILF("blast: %s", T->err);
    uint64_t ms = nf_now_ms() - t0;
    printf("ok: blast %llu bytes in %llu ms (%llu bytes/s)\n", (unsigned long long)sent,
           (unsigned long long)ms, (unsigned long long)(ms ? sent * 1000 / ms : sent * 1000));
}

/* ---- injected faults, seen from here ---- */

static uint16_t pending_page = 0xffff;
static uint64_t pending_t0;

static void push_one(void)
{
    if (nf_tx_drain(T, O.timeout_ms) < 0)
        FAILF("%s", T->err);
    netif_tx_request_t r;
    one_frame_raw(1, &r);
    pending_page = 1;
    pending_t0 = nf_now_ms();
    nf_push_raw(T, 0, &r, 1);
}

static void corrupt(unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        push_one();
        netif_tx_response_t rsp;
        if (nf_collect(T, 0, 1, O.timeout_ms, &rsp) < 0)
            FAILF("corrupt: %s", T->err);
        T->q[0].txbusy[1] = false;
        bool bad_id = rsp.id != 1, bad_st = rsp.status == 0x7fff;
        if (!bad_id && !bad_st)
            FAILF("corrupt: answer %u is valid (id %u status %d)", k, rsp.id, rsp.status);
        printf("ok: corrupt answer %u (%s)\n", k, bad_id ? "id wrong" : "status 32767");
    }
}

static void no_answer(unsigned ms)
{
    push_one();
    netif_tx_response_t rsp;
    if (nf_collect(T, 0, 1, ms, &rsp) == 0)
        FAILF("no-answer: answered (status %d) within %u ms", rsp.status, ms);
    printf("ok: no answer for %u ms\n", ms);
}

static void await_answer(unsigned ms)
{
    netif_tx_response_t rsp;
    if (nf_collect(T, 0, 1, ms, &rsp) < 0)
        FAILF("await-answer: %s", T->err);
    if (rsp.id != pending_page || rsp.status != NETIF_RSP_OKAY)
        FAILF("await-answer: id %u status %d", rsp.id, rsp.status);
    printf("ok: the pending packet was answered\n");
}

static void latency_at_least(unsigned ms)
{
    push_one();
    await_answer(O.timeout_ms);
    uint64_t el = nf_now_ms() - pending_t0;
    if (el < ms)
        FAILF("latency-at-least: answered after %llu ms", (unsigned long long)el);
    printf("ok: answered after %llu ms\n", (unsigned long long)el);
}

static void wait_file(const char *path)
{
    uint64_t end = nf_now_ms() + O.timeout_ms;
    while (access(path, F_OK) != 0) {
        if (nf_now_ms() >= end)
            FAILF("wait-file %s: timed out", path);
        nf_poll(T); /* keep the rings moving meanwhile */
        nf_wait_event(T, 20);
    }
}

static void do_connect(void)
{
    if (nf_connect(T, &O) < 0)
        FAILF("connect: %s", T->err);
    printf("ok: connected (%u queue(s)%s)\n", T->nq, O.split ? ", split event channels" : "");
}

static void await_restart(void)
{
    /* A restarted backend resets its state to InitWait. */
    if (nf_wait_state(T, T->be, 1u << XenbusStateInitWait, O.timeout_ms) < 0)
        FAILF("await-restart: %s", T->err);
    nf_drop(T);
    struct nf_opts o = O;
    o.timeout_ms = 3000;
    if (nf_connect(T, &o) == 0) {
        T->o.timeout_ms = O.timeout_ms;
        printf("ok: connected (%u queue(s)%s)\n", T->nq, O.split ? ", split event channels" : "");
        return;
    }
    /* The backend core can take a frontend that reconnects very fast for the
     * stale one it found at start (backends/core/be_xenbus.c, the "stale"
     * state) and never answer: say so, close, connect again. */
    printf("# reconnect not answered (%s): closing and connecting again\n", T->err);
    nf_write_state(T, XenbusStateClosing);
    if (nf_wait_state(T, T->be, 1u << XenbusStateClosed, O.timeout_ms) < 0)
        FAILF("await-restart: %s", T->err);
    nf_drop(T);
    nf_write_state(T, XenbusStateClosed);
    do_connect();
}

static int run(int argc, char **argv, int i)
{
    for (; i < argc; i++) {
        const char *c = argv[i];
        if (!strcmp(c, "connect")) {
            do_connect();
        } else if (!strcmp(c, "reconnect")) {
            if (nf_reconnect(T) < 0)
                FAILF("reconnect: %s", T->err);
            printf("ok: reconnected\n");
        } else if (!strcmp(c, "close")) {
            if (nf_close(T) < 0)
                FAILF("close: %s", T->err);
            printf("ok: closed\n");
        } else if (!strcmp(c, "drop")) {
            nf_drop(T);
        } else if (!strcmp(c, "await-restart")) {
            await_restart();
        } else if (!strcmp(c, "udp") || !strcmp(c, "udp-partial") || !strcmp(c, "udp6") ||
                   !strcmp(c, "udp6-partial")) {
            need(argc, i, 3, c);
            unsigned sl = i + 4 < argc && argv[i + 4][0] >= '0' && argv[i + 4][0] <= '9'
                              ? (unsigned)num(argv[i + 4])
                              : 0;
            send_udp((unsigned)num(argv[i + 1]), (unsigned)num(argv[i + 2]),
                     (unsigned)num(argv[i + 3]), sl ? sl : 1, strstr(c, "-partial") != NULL,
                     !strncmp(c, "udp6", 4));
            i += sl ? 4 : 3;
        } else if (!strcmp(c, "tcp-gso")) {
            need(argc, i, 3, c);
            tcp_gso((unsigned)num(argv[i + 1]), (unsigned)num(argv[i + 2]),
                    (unsigned)num(argv[i + 3]), 1000);
            i += 3;
        } else if (!strcmp(c, "expect-udp") || !strcmp(c, "expect-udp6")) {
            need(argc, i, 2, c);
            expect_udp((unsigned)num(argv[i + 1]), (unsigned)num(argv[i + 2]),
                       !strcmp(c, "expect-udp6"));
            i += 2;
        } else if (!strcmp(c, "expect-tcp")) {
            need(argc, i, 2, c);
            expect_tcp((unsigned)num(argv[i + 1]), num(argv[i + 2]));
            i += 2;
        } else if (!strcmp(c, "expect-to")) {
            need(argc, i, 2, c);
            uint8_t m[6];
            mac_arg(argv[i + 1], m);
            unsigned want = (unsigned)num(argv[i + 2]), got = count_to(m, want, O.timeout_ms);
            if (got < want)
                FAILF("expect-to %s: %u of %u frames", argv[i + 1], got, want);
            printf("ok: received %u frames to %s\n", got, argv[i + 1]);
            i += 2;
        } else if (!strcmp(c, "expect-none-to")) {
            need(argc, i, 2, c);
            uint8_t m[6];
            mac_arg(argv[i + 1], m);
            unsigned ms = (unsigned)num(argv[i + 2]), got = count_to(m, 1, ms);
            if (got)
                FAILF("expect-none-to %s: a frame arrived", argv[i + 1]);
            printf("ok: no frame to %s for %u ms\n", argv[i + 1], ms);
            i += 2;
        } else if (!strcmp(c, "count-rx")) {
            need(argc, i, 1, c);
            count_rx((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "mcast-add") || !strcmp(c, "mcast-del")) {
            need(argc, i, 1, c);
            bool st = i + 2 < argc && (argv[i + 2][0] == '-' || argv[i + 2][0] == '0');
            mcast(!strcmp(c, "mcast-add"), argv[i + 1], st ? (int)strtol(argv[i + 2], NULL, 0) : 0);
            i += st ? 2 : 1;
        } else if (!strcmp(c, "bad")) {
            need(argc, i, 1, c);
            bad(argv[++i]);
        } else if (!strcmp(c, "bad-all")) {
            for (const char *const *k = nbad_kinds; *k; k++)
                bad(*k);
        } else if (!strcmp(c, "split-push")) {
            split_push();
        } else if (!strcmp(c, "garbage-index")) {
            garbage_index();
        } else if (!strcmp(c, "endless")) {
            endless();
        } else if (!strcmp(c, "blast")) {
            need(argc, i, 3, c);
            blast((unsigned)num(argv[i + 1]), num(argv[i + 2]), (unsigned)num(argv[i + 3]));
            i += 3;
        } else if (!strcmp(c, "corrupt")) {
            need(argc, i, 1, c);
            corrupt((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "no-answer")) {
            need(argc, i, 1, c);
            no_answer((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "await-answer")) {
            need(argc, i, 1, c);
            await_answer((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "latency-at-least")) {
            need(argc, i, 1, c);
            latency_at_least((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "wait-file")) {
            need(argc, i, 1, c);
            wait_file(argv[++i]);
        } else if (!strcmp(c, "sleep")) {
            need(argc, i, 1, c);
            struct timespec ts = {0, 0};
            uint64_t ms = num(argv[++i]);
            ts.tv_sec = (time_t)(ms / 1000);
            ts.tv_nsec = (long)(ms % 1000) * 1000000L;
            nanosleep(&ts, NULL);
        } else if (!strcmp(c, "stats")) {
            printf("ok: stats tx ok %llu error %llu dropped %llu null %llu other %llu; rx errors "
                   "%llu, queue drops %llu\n",
                   (unsigned long long)T->txs.ok, (unsigned long long)T->txs.error,
                   (unsigned long long)T->txs.dropped, (unsigned long long)T->txs.null,
                   (unsigned long long)T->txs.other, (unsigned long long)T->rx_errors,
                   (unsigned long long)T->rx_dropped);
        } else {
            FAILF("unknown command '%s'", c);
        }
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    nf_default_opts(&O);
    static const struct option opts[] = {{"queues", required_argument, NULL, 'q'},
                                         {"split", no_argument, NULL, 's'},
                                         {"no-sg", no_argument, NULL, 'S'},
                                         {"no-gso", no_argument, NULL, 'G'},
                                         {"no-csum", no_argument, NULL, 'C'},
                                         {"no-csum6", no_argument, NULL, '6'},
                                         {"mcast-control", no_argument, NULL, 'm'},
                                         {"rx-bufs", required_argument, NULL, 'r'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"no-rx-copy", no_argument, NULL, 'c'},
                                         {"no-rx-notify", no_argument, NULL, 'n'},
                                         {"bogus-ring", no_argument, NULL, 'B'},
                                         {"ip", required_argument, NULL, 'i'},
                                         {"peer-ip", required_argument, NULL, 'p'},
                                         {"peer-mac", required_argument, NULL, 'M'},
                                         {"src-mac", required_argument, NULL, 'F'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        switch (c) {
        case 'q':
            O.queues = (unsigned)num(optarg);
            break;
        case 's':
            O.split = true;
            break;
        case 'S':
            O.sg = false;
            break;
        case 'G':
            O.gso4 = O.gso6 = false;
            break;
        case 'C':
            O.no_csum = true;
            O.csum6 = false;
            break;
        case '6':
            O.csum6 = false;
            break;
        case 'm':
            O.mcast_ctrl = true;
            break;
        case 'r':
            O.rx_bufs = (unsigned)num(optarg);
            break;
        case 't':
            O.timeout_ms = (unsigned)num(optarg) * 1000u;
            break;
        case 'c':
            O.no_rx_copy = true;
            break;
        case 'n':
            O.no_rx_notify = true;
            break;
        case 'B':
            O.bogus_ring_ref = true;
            break;
        case 'i':
            if (nfr_parse_ip(optarg, me.ip) < 0)
                FAILF("--ip %s", optarg);
            break;
        case 'p':
            if (nfr_parse_ip(optarg, peer.ip) < 0)
                FAILF("--peer-ip %s", optarg);
            break;
        case 'M':
            mac_arg(optarg, peer.mac);
            break;
        case 'F': /* a source MAC other than the vif's: spoofing */
            mac_arg(optarg, src_mac);
            src_mac_set = true;
            break;
        case 'I':
            if (inet_pton(AF_INET6, optarg, me.ip6) != 1)
                FAILF("--ip6 %s", optarg);
            break;
        case 'P':
            if (inet_pton(AF_INET6, optarg, peer.ip6) != 1)
                FAILF("--peer-ip6 %s", optarg);
            break;
        default:
            fprintf(stderr, "usage: netfront [OPTIONS] FE-DIR CMD...\n");
            return 2;
        }
    }
    if (optind >= argc)
        FAILF("no frontend dir");
    T = nf_open(argv[optind]);
    if (!T)
        return 1;
    memcpy(me.mac, src_mac_set ? src_mac : T->mac, 6);
    run(argc, argv, optind + 1);
    nf_free(T);
    return 0;
}
