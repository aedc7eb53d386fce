/* sfront - the sound tests' sndif frontend, over Debian's libxenstore,
 * libxengnttab (gntshr) and libxenevtchn: the handshake for every stream of
 * the card the toolstack wrote, then a script of requests, each checked.
 *
 *   sfront [--timeout MS] [--version V|none] FE-DIR CMD...
 *
 *   connect                       handshake (version 2), every stream
 *   open S RATE FMT CH BUF PERIOD  OPEN stream S (its index on the card)
 *   play S FILE                   WRITE FILE (raw) through S paced by its CUR_POS events,
 *                                 TRIGGER START after the first buffer, STOP at the end
 *   capture S FILE BYTES          TRIGGER START, READ BYTES as CUR_POS events come, STOP
 *   query S FMTMASK RMIN RMAX CMIN CMAX BMIN BMAX PMIN PMAX   print the narrowed ranges
 *   setvol S V...  getvol S  mute S M...  unmute S M...  trigger S start|pause|stop|resume
 *   write S OFF LEN  read S OFF LEN  close S  sleep MS
 *   raw S OP [WORD...]            any request: words are the 32-bit fields after the header
 *   badopen S KIND RATE FMT CH BUF PERIOD   OPEN with a broken directory (KIND: badref,
 *                                 shortchain, loop, zero, badnext, badref2)
 *   fail CMD...                   the command must get a negative status (printed)
 *   hostile SECONDS SEED          random requests, bad refs and offsets on every stream
 *   disconnect                    Closing, wait for Closed
 *
 * Prints one line per result ("ok", "status -22", "events n=... first=0 ...");
 * exits 1 at the first unexpected result.
 */
#define _GNU_SOURCE
#include "xen_barriers.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xen/io/sndif.h>
#include <xen/io/xenbus.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

#define PAGE      4096u
#define MAX_ST    16u
#define BUF_PAGES 64u /* 256 KiB per stream at most */
#define DIR_PAGES 2u

struct st {
    char dir[300];
    bool capture;
    void *ring;
    uint32_t ring_ref;
    xen_sndif_front_ring_t fr;
    evtchn_port_t port, evt_port;
    struct xensnd_event_page *evt;
    uint32_t evt_ref;
    uint8_t *buf;
    uint32_t buf_refs[BUF_PAGES];
    uint32_t *dir_pg; /* DIR_PAGES pages */
    uint32_t dir_refs[DIR_PAGES];
    uint32_t buffer_sz, period_sz, frame_bytes;
    uint16_t evt_expect;
    uint64_t last_pos;
    unsigned events, bad_events;
};

static struct xs_handle *xs;
static xengntshr_handle *gs;
static xenevtchn_handle *xce;
static char fe[256], be[256];
static unsigned be_id, nst, timeout_ms = 10000;
static const char *version = "2";
static struct st sts[MAX_ST];
static uint16_t next_id = 1;
static bool expect_fail;
static bool hostile_mode; /* the event page's index may be our own scribble */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sfront: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static char *rd(const char *dir, const char *key)
{
    char p[512];
    unsigned len;
    snprintf(p, sizeof(p), "%s/%s", dir, key);
    return xs_read(xs, XBT_NULL, p, &len);
}

static void wr(const char *dir, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void wr(const char *dir, const char *key, const char *fmt, ...)
{
    char p[512], v[256];
    snprintf(p, sizeof(p), "%s/%s", dir, key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    if (!xs_write(xs, XBT_NULL, p, v, strlen(v)))
        die("writing %s: %s", p, strerror(errno));
}

static int state_of(const char *dir)
{
    char *v = rd(dir, "state");
    int s = v ? atoi(v) : -1;
    free(v);
    return s;
}

static int wait_state(const char *dir, unsigned mask)
{
    uint64_t end = now_ms() + timeout_ms;
    int s;
    while (!((s = state_of(dir)) >= 0 && s < 32 && (mask & (1u << s)))) {
        if (now_ms() > end)
            die("%s/state is %d after %u ms (want mask %#x)", dir, s, timeout_ms, mask);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return s;
}

static void *share(unsigned n, uint32_t *refs)
{
    void *p = xengntshr_share_pages(gs, be_id, (int)n, refs, 1);
    if (!p)
        die("sharing %u pages: %s", n, strerror(errno));
    return p;
}

static void connect_all(void)
{
    wr(fe, "state", "%d", XenbusStateInitialising);
    wait_state(be, 1u << XenbusStateInitWait);
    char *v = rd(be, XENSND_FIELD_BE_VERSIONS);
    printf("versions %s\n", v ? v : "(none)");
    free(v);
    for (nst = 0; nst < MAX_ST;) {
        unsigned before = nst;
        for (unsigned pcm = 0; pcm < 8; pcm++)
            for (unsigned i = 0; i < 8 && nst < MAX_ST; i++) {
                char d[300];
                snprintf(d, sizeof(d), "%s/%u/%u", fe, pcm, i);
                char *t = rd(d, XENSND_FIELD_TYPE);
                if (!t)
                    continue;
                struct st *s = &sts[nst++];
                snprintf(s->dir, sizeof(s->dir), "%s", d);
                s->capture = !strcmp(t, "c");
                free(t);
            }
        if (nst == before)
            break;
        break;
    }
    if (!nst)
        die("%s: no streams", fe);
    for (unsigned i = 0; i < nst; i++) {
        struct st *s = &sts[i];
        s->ring = share(1, &s->ring_ref);
        SHARED_RING_INIT((xen_sndif_sring_t *)s->ring);
        FRONT_RING_INIT(&s->fr, (xen_sndif_sring_t *)s->ring, PAGE);
        s->evt = share(1, &s->evt_ref);
        memset(s->evt, 0, PAGE);
        s->buf = share(BUF_PAGES, s->buf_refs);
        s->dir_pg = share(DIR_PAGES, s->dir_refs);
        int p = xenevtchn_bind_unbound_port(xce, be_id),
            q = xenevtchn_bind_unbound_port(xce, be_id);
        if (p < 0 || q < 0)
            die("binding ports: %s", strerror(errno));
        s->port = (evtchn_port_t)p;
        s->evt_port = (evtchn_port_t)q;
        wr(s->dir, XENSND_FIELD_RING_REF, "%u", s->ring_ref);
        wr(s->dir, XENSND_FIELD_EVT_CHNL, "%u", s->port);
        wr(s->dir, XENSND_FIELD_EVT_RING_REF, "%u", s->evt_ref);
        wr(s->dir, XENSND_FIELD_EVT_EVT_CHNL, "%u", s->evt_port);
    }
    if (strcmp(version, "none")) {
        wr(fe, XENSND_FIELD_FE_VERSION, "%s", version);
    } else { /* as Linux's snd_xen_front, which writes no version (nor leaves one) */
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", fe, XENSND_FIELD_FE_VERSION);
        if (!xs_rm(xs, XBT_NULL, p) && errno != ENOENT)
            die("removing %s: %s", p, strerror(errno));
    }
    wr(fe, "state", "%d", XenbusStateInitialised);
    int st = wait_state(be, 1u << XenbusStateConnected | 1u << XenbusStateClosing |
                                1u << XenbusStateClosed);
    if (st != XenbusStateConnected) {
        char *e = rd(be, "error");
        die("backend state %d, not Connected (error: %s)", st, e ? e : "none");
    }
    wr(fe, "state", "%d", XenbusStateConnected);
    printf("connected %u streams\n", nst);
}

static void wait_event(unsigned ms)
{
    struct pollfd p = {.fd = xenevtchn_fd(xce), .events = POLLIN};
    if (poll(&p, 1, (int)ms) > 0) {
        xenevtchn_port_or_error_t port;
        while ((port = xenevtchn_pending(xce)) >= 0) {
            xenevtchn_unmask(xce, (evtchn_port_t)port);
            p.revents = 0;
            if (poll(&p, 1, 0) <= 0)
                break;
        }
    }
}

/* Take the events the backend posted; check their numbering. */
static void drain_events(struct st *s)
{
    uint32_t prod = __atomic_load_n(&s->evt->in_prod, __ATOMIC_ACQUIRE);
    uint32_t cons = s->evt->in_cons;
    if (prod - cons > XENSND_IN_RING_LEN) {
        if (!hostile_mode)
            die("event page: prod %u cons %u", prod, cons);
        cons = prod;
    }
    for (; cons != prod; cons++) {
        struct xensnd_evt e = XENSND_IN_RING_REF(s->evt, cons);
        if (hostile_mode)
            continue;
        if (e.type != XENSND_EVT_CUR_POS || e.id != s->evt_expect) {
            s->bad_events++;
            fprintf(stderr, "sfront: event id %u type %u, expected id %u\n", e.id, e.type,
                    s->evt_expect);
            s->evt_expect = (uint16_t)(e.id + 1);
            continue;
        }
        s->evt_expect++;
        s->events++;
        if (e.op.cur_pos.position < s->last_pos) {
            s->bad_events++;
            fprintf(stderr, "sfront: position %llu went back from %llu\n",
                    (unsigned long long)e.op.cur_pos.position, (unsigned long long)s->last_pos);
        }
        s->last_pos = e.op.cur_pos.position;
    }
    __atomic_store_n(&s->evt->in_cons, cons, __ATOMIC_RELEASE);
}

static struct st *stream(const char *a)
{
    unsigned i = (unsigned)atoi(a);
    if (i >= nst)
        die("no stream %s", a);
    return &sts[i];
}

/* Send req, wait for its response. Returns the status. */
static int roundtrip(struct st *s, struct xensnd_req *req, struct xensnd_resp *out)
{
    req->id = next_id++;
    *RING_GET_REQUEST(&s->fr, s->fr.req_prod_pvt) = *req;
    s->fr.req_prod_pvt++;
    int notify;
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&s->fr, notify);
    if (notify)
        xenevtchn_notify(xce, s->port);
    uint64_t end = now_ms() + timeout_ms;
    for (;;) {
        RING_IDX rp = __atomic_load_n(&s->fr.sring->rsp_prod, __ATOMIC_ACQUIRE);
        if (s->fr.rsp_cons != rp) {
            struct xensnd_resp rsp;
            RING_COPY_RESPONSE(&s->fr, s->fr.rsp_cons, &rsp);
            s->fr.rsp_cons++;
            if (rsp.id != req->id || rsp.operation != req->operation)
                die("response id %u op %u to request id %u op %u", rsp.id, rsp.operation, req->id,
                    req->operation);
            if (out)
                *out = rsp;
            return rsp.status;
        }
        int more;
        RING_FINAL_CHECK_FOR_RESPONSES(&s->fr, more);
        if (more)
            continue;
        if (now_ms() > end)
            die("no response to op %u within %u ms", req->operation, timeout_ms);
        wait_event(50);
        drain_events(s);
    }
}

static void result(const char *what, int st)
{
    if (st)
        printf("%s: status %d\n", what, st);
    else
        printf("%s: ok\n", what);
    if (expect_fail ? st >= 0 : st != 0)
        die("%s: status %d, wanted %s", what, st, expect_fail ? "an error" : "0");
}

static int fmt_bytes(unsigned f)
{
    switch (f) {
    case XENSND_PCM_FORMAT_S8:
    case XENSND_PCM_FORMAT_U8:
        return 1;
    case XENSND_PCM_FORMAT_S16_LE:
    case XENSND_PCM_FORMAT_S16_BE:
    case XENSND_PCM_FORMAT_U16_LE:
    case XENSND_PCM_FORMAT_U16_BE:
        return 2;
    default:
        return 4;
    }
}

static unsigned parse_fmt(const char *a)
{
    static const char *const n[] = {"s8",     "u8",     "s16_le", "s16_be", "u16_le", "u16_be",
                                    "s24_le", "s24_be", "u24_le", "u24_be", "s32_le"};
    for (unsigned i = 0; i < sizeof(n) / sizeof(n[0]); i++)
        if (!strcmp(a, n[i]))
            return i;
    return (unsigned)strtoul(a, NULL, 0);
}

/* Fill the directory for n buffer pages (kind: how to break it). */
static uint32_t fill_dir(struct st *s, unsigned n, const char *kind)
{
    uint32_t *d0 = s->dir_pg, *d1 = s->dir_pg + PAGE / 4;
    const unsigned per = PAGE / 4 - 1;
    memset(s->dir_pg, 0, PAGE * DIR_PAGES);
    for (unsigned i = 0; i < n && i < per; i++)
        d0[1 + i] = s->buf_refs[i % BUF_PAGES];
    for (unsigned i = per; i < n && i < 2 * per; i++)
        d1[1 + i - per] = s->buf_refs[i % BUF_PAGES];
    d0[0] = n > per ? s->dir_refs[1] : 0;
    if (!kind)
        return s->dir_refs[0];
    if (!strcmp(kind, "badref"))
        d0[1] = 0xfffffff0u;
    else if (!strcmp(kind, "shortchain"))
        d0[0] = 0;
    else if (!strcmp(kind, "loop"))
        d0[0] = s->dir_refs[0];
    else if (!strcmp(kind, "zero"))
        return 0xfffffff1u;
    else if (!strcmp(kind, "badnext"))
        d0[0] = 0xfffffff2u;
    else if (!strcmp(kind, "badref2"))
        d1[1] = 0xfffffff3u;
    return s->dir_refs[0];
}

static int do_open(struct st *s, char **a, const char *kind)
{
    struct xensnd_req r = {.operation = XENSND_OP_OPEN};
    r.op.open.pcm_rate = (uint32_t)strtoul(a[0], NULL, 0);
    r.op.open.pcm_format = (uint8_t)parse_fmt(a[1]);
    r.op.open.pcm_channels = (uint8_t)strtoul(a[2], NULL, 0);
    r.op.open.buffer_sz = (uint32_t)strtoul(a[3], NULL, 0);
    r.op.open.period_sz = (uint32_t)strtoul(a[4], NULL, 0);
    unsigned pages = (r.op.open.buffer_sz + PAGE - 1) / PAGE;
    /* A larger buffer (for the backend to refuse) repeats our pages. */
    r.op.open.gref_directory = fill_dir(s, pages, kind);
    int st = roundtrip(s, &r, NULL);
    if (!st) {
        s->buffer_sz = r.op.open.buffer_sz;
        s->period_sz = r.op.open.period_sz;
        s->frame_bytes = (unsigned)fmt_bytes(r.op.open.pcm_format) * r.op.open.pcm_channels;
        s->evt_expect = 0;
        s->last_pos = 0;
        s->events = s->bad_events = 0;
        memset(s->evt, 0, sizeof(*s->evt));
    }
    return st;
}

static int rw(struct st *s, unsigned op, uint32_t off, uint32_t len)
{
    struct xensnd_req r = {.operation = (uint8_t)op};
    r.op.rw.offset = off;
    r.op.rw.length = len;
    return roundtrip(s, &r, NULL);
}

static int trigger(struct st *s, unsigned type)
{
    struct xensnd_req r = {.operation = XENSND_OP_TRIGGER};
    r.op.trigger.type = (uint8_t)type;
    return roundtrip(s, &r, NULL);
}

static void report_events(struct st *s, uint64_t t0, uint64_t t1, uint64_t p0)
{
    double secs = (double)(t1 - t0) / 1000.0;
    double rate = secs > 0 ? (double)(s->last_pos - p0) / s->frame_bytes / secs : 0;
    printf("events n=%u bad=%u last_id=%d position=%llu rate=%.0f\n", s->events, s->bad_events,
           (int)s->evt_expect - 1, (unsigned long long)s->last_pos, rate);
    if (s->bad_events)
        die("%u events out of order or going back", s->bad_events);
}

/* Play a raw file as Linux's frontend would: WRITE as room appears (room known
 * from the CUR_POS events), the first buffer before TRIGGER START. */
static void play(struct st *s, const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        die("%s: %s", file, strerror(errno));
    if (!s->period_sz)
        die("play needs a period");
    uint64_t written = 0, total = 0, t0 = 0, p0 = 0;
    bool started = false, eof = false;
    uint8_t *chunk = malloc(s->period_sz);
    uint64_t end = now_ms() + 3600 * 1000;
    for (;;) {
        drain_events(s);
        if (started && !t0 && s->events) {
            t0 = now_ms();
            p0 = s->last_pos;
        }
        while (!eof && written + s->period_sz <= s->last_pos + s->buffer_sz) {
            size_t n = fread(chunk, 1, s->period_sz, f);
            n -= n % s->frame_bytes;
            if (!n) {
                eof = true;
                break;
            }
            uint32_t off = (uint32_t)(written % s->buffer_sz);
            uint32_t a = s->buffer_sz - off < n ? s->buffer_sz - off : (uint32_t)n;
            memcpy(s->buf + off, chunk, a);
            int st = rw(s, XENSND_OP_WRITE, off, a);
            if (!st && a < n) {
                memcpy(s->buf, chunk + a, n - a);
                st = rw(s, XENSND_OP_WRITE, 0, (uint32_t)(n - a));
            }
            if (st)
                die("WRITE at %u: status %d", off, st);
            written += n;
            total += n;
        }
        if (!started && (eof || written >= s->buffer_sz)) {
            int st = trigger(s, XENSND_OP_TRIGGER_START);
            if (st)
                die("TRIGGER START: status %d", st);
            started = true;
        }
        if (eof && s->last_pos + s->period_sz > total)
            break;
        if (now_ms() > end ||
            (started && s->events == 0 && now_ms() > end - 3600 * 1000 + timeout_ms))
            die("no progress: position %llu of %llu", (unsigned long long)s->last_pos,
                (unsigned long long)total);
        wait_event(100);
    }
    uint64_t t1 = now_ms();
    /* What is left, less than one period, plays out. */
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    int st = trigger(s, XENSND_OP_TRIGGER_STOP);
    if (st)
        die("TRIGGER STOP: status %d", st);
    fclose(f);
    free(chunk);
    printf("played %llu octets\n", (unsigned long long)total);
    report_events(s, t0, t1, p0);
}

static void capture(struct st *s, const char *file, uint64_t want)
{
    FILE *f = fopen(file, "wb");
    if (!f)
        die("%s: %s", file, strerror(errno));
    int st = trigger(s, XENSND_OP_TRIGGER_START);
    if (st)
        die("TRIGGER START: status %d", st);
    uint64_t got = 0, t0 = now_ms(), last_change = now_ms();
    while (got < want) {
        drain_events(s);
        uint64_t avail = s->last_pos - got;
        if (avail > s->buffer_sz)
            die("overrun: %llu octets captured unread", (unsigned long long)avail);
        if (avail) {
            last_change = now_ms();
            uint32_t off = (uint32_t)(got % s->buffer_sz);
            uint32_t n = (uint32_t)(avail < want - got ? avail : want - got);
            if (n > s->buffer_sz - off)
                n = s->buffer_sz - off;
            st = rw(s, XENSND_OP_READ, off, n);
            if (st)
                die("READ: status %d", st);
            fwrite(s->buf + off, 1, n, f);
            got += n;
            continue;
        }
        if (now_ms() - last_change > timeout_ms)
            die("no capture progress at %llu", (unsigned long long)got);
        wait_event(100);
    }
    uint64_t t1 = now_ms();
    st = trigger(s, XENSND_OP_TRIGGER_STOP);
    if (st)
        die("TRIGGER STOP: status %d", st);
    fclose(f);
    printf("captured %llu octets\n", (unsigned long long)got);
    report_events(s, t0, t1, 0);
}

static void query(struct st *s, char **a)
{
    struct xensnd_req r = {.operation = XENSND_OP_HW_PARAM_QUERY};
    struct xensnd_query_hw_param *q = &r.op.hw_param;
    q->formats = strtoull(a[0], NULL, 0);
    q->rates.min = (uint32_t)strtoul(a[1], NULL, 0);
    q->rates.max = (uint32_t)strtoul(a[2], NULL, 0);
    q->channels.min = (uint32_t)strtoul(a[3], NULL, 0);
    q->channels.max = (uint32_t)strtoul(a[4], NULL, 0);
    q->buffer.min = (uint32_t)strtoul(a[5], NULL, 0);
    q->buffer.max = (uint32_t)strtoul(a[6], NULL, 0);
    q->period.min = (uint32_t)strtoul(a[7], NULL, 0);
    q->period.max = (uint32_t)strtoul(a[8], NULL, 0);
    struct xensnd_resp rsp;
    int st = roundtrip(s, &r, &rsp);
    if (!st) {
        struct xensnd_query_hw_param *o = &rsp.resp.hw_param;
        printf("query formats=%#llx rates=%u..%u channels=%u..%u buffer=%u..%u period=%u..%u\n",
               (unsigned long long)o->formats, o->rates.min, o->rates.max, o->channels.min,
               o->channels.max, o->buffer.min, o->buffer.max, o->period.min, o->period.max);
    }
    result("query", st);
}

/* Random requests for secs: any operation, offsets and lengths near and past
 * the buffer, broken directories, triggers in any order. */
static void hostile(unsigned secs, unsigned seed)
{
    srandom(seed);
    hostile_mode = true;
    uint64_t end = now_ms() + secs * 1000ull;
    unsigned n = 0;
    while (now_ms() < end) {
        struct st *s = &sts[(unsigned)random() % nst];
        struct xensnd_req r;
        uint32_t *w = (uint32_t *)&r;
        for (unsigned i = 0; i < sizeof(r) / 4; i++)
            w[i] = (uint32_t)random();
        r.operation = (uint8_t)(random() % 12);
        if (r.operation == XENSND_OP_OPEN && random() % 2) {
            static const uint32_t rates[] = {8000, 44100, 48000, 12345};
            r.op.open.pcm_rate = rates[random() % 4];
            r.op.open.pcm_format = (uint8_t)(random() % 12);
            r.op.open.pcm_channels = (uint8_t)(random() % 4);
            r.op.open.buffer_sz = (uint32_t)(random() % (BUF_PAGES * PAGE + 8192));
            r.op.open.period_sz = (uint32_t)(random() % 8192);
            static const char *const kinds[] = {NULL, "badref", "shortchain", "loop", "zero"};
            unsigned pages = (r.op.open.buffer_sz + PAGE - 1) / PAGE;
            r.op.open.gref_directory =
                fill_dir(s, pages > BUF_PAGES ? BUF_PAGES : pages, kinds[random() % 5]);
        } else if (r.operation == XENSND_OP_READ || r.operation == XENSND_OP_WRITE ||
                   (r.operation >= XENSND_OP_SET_VOLUME && r.operation <= XENSND_OP_UNMUTE)) {
            if (random() % 2) {
                r.op.rw.offset = (uint32_t)(random() % (BUF_PAGES * PAGE * 2));
                r.op.rw.length = (uint32_t)(random() % (BUF_PAGES * PAGE));
            }
        } else if (r.operation == XENSND_OP_TRIGGER && random() % 2) {
            r.op.trigger.type = (uint8_t)(random() % 5);
        }
        roundtrip(s, &r, NULL);
        drain_events(s);
        if (random() % 64 == 0) {
            /* Scribble on the event page's consumer index. */
            s->evt->in_cons = (uint32_t)random();
            s->evt_expect = 0;
        }
        n++;
    }
    /* Leave the backend able to answer: one sane round trip per stream. */
    for (unsigned i = 0; i < nst; i++) {
        struct xensnd_req r = {.operation = XENSND_OP_CLOSE};
        roundtrip(&sts[i], &r, NULL);
        r.operation = 42;
        if (roundtrip(&sts[i], &r, NULL) >= 0)
            die("unknown operation answered %d", 0);
    }
    printf("hostile: %u requests, backend answering\n", n);
}

int main(int argc, char **argv)
{
    int i = 1;
    while (i + 1 < argc && argv[i][0] == '-') {
        if (!strcmp(argv[i], "--timeout"))
            timeout_ms = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--version"))
            version = argv[i + 1];
        else
            die("unknown option %s", argv[i]);
        i += 2;
    }
    if (i >= argc)
        die("usage: sfront [--timeout MS] [--version V] FE-DIR CMD...");
    snprintf(fe, sizeof(fe), "%s", argv[i++]);
    xs = xs_open(0);
    gs = xengntshr_open(NULL, 0);
    xce = xenevtchn_open(NULL, 0);
    if (!xs || !gs || !xce)
        die("opening xenstore/gntshr/evtchn: %s", strerror(errno));
    char *b = rd(fe, "backend"), *bid = rd(fe, "backend-id");
    if (!b || !bid)
        die("%s: no backend", fe);
    snprintf(be, sizeof(be), "%s", b);
    be_id = (unsigned)atoi(bid);
    free(b);
    free(bid);
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (i < argc) {
        char *c = argv[i++];
        int left = argc - i;
#define NEED(k)                                                                                    \
    do {                                                                                           \
        if (left < (k))                                                                            \
            die("%s: %d arguments needed", c, (k));                                                \
    } while (0)
        if (!strcmp(c, "fail")) {
            expect_fail = true;
            continue;
        }
        if (!strcmp(c, "connect")) {
            connect_all();
        } else if (!strcmp(c, "disconnect")) {
            wr(fe, "state", "%d", XenbusStateClosing);
            wait_state(be, 1u << XenbusStateClosed);
            wr(fe, "state", "%d", XenbusStateClosed);
            printf("closed\n");
        } else if (!strcmp(c, "sleep")) {
            NEED(1);
            struct timespec ts = {atoi(argv[i]) / 1000, (atoi(argv[i]) % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            i++;
        } else if (!strcmp(c, "open")) {
            NEED(6);
            result("open", do_open(stream(argv[i]), argv + i + 1, NULL));
            i += 6;
        } else if (!strcmp(c, "badopen")) {
            NEED(7);
            result("badopen", do_open(stream(argv[i]), argv + i + 2, argv[i + 1]));
            i += 7;
        } else if (!strcmp(c, "close")) {
            NEED(1);
            struct xensnd_req r = {.operation = XENSND_OP_CLOSE};
            result("close", roundtrip(stream(argv[i]), &r, NULL));
            i++;
        } else if (!strcmp(c, "play")) {
            NEED(2);
            play(stream(argv[i]), argv[i + 1]);
            i += 2;
        } else if (!strcmp(c, "capture")) {
            NEED(3);
            capture(stream(argv[i]), argv[i + 1], strtoull(argv[i + 2], NULL, 0));
            i += 3;
        } else if (!strcmp(c, "query")) {
            NEED(10);
            query(stream(argv[i]), argv + i + 1);
            i += 10;
        } else if (!strcmp(c, "trigger")) {
            NEED(2);
            static const char *const t[] = {"start", "pause", "stop", "resume"};
            unsigned k = 0;
            while (k < 4 && strcmp(argv[i + 1], t[k]))
                k++;
            result("trigger", trigger(stream(argv[i]), k < 4 ? k : (unsigned)atoi(argv[i + 1])));
            i += 2;
        } else if (!strcmp(c, "write") || !strcmp(c, "read")) {
            NEED(3);
            result(c, rw(stream(argv[i]), c[0] == 'w' ? XENSND_OP_WRITE : XENSND_OP_READ,
                         (uint32_t)strtoul(argv[i + 1], NULL, 0),
                         (uint32_t)strtoul(argv[i + 2], NULL, 0)));
            i += 3;
        } else if (!strcmp(c, "setvol") || !strcmp(c, "mute") || !strcmp(c, "unmute")) {
            NEED(1);
            struct st *s = stream(argv[i++]);
            unsigned k = 0;
            bool vol = c[0] == 's';
            while (i < argc && (argv[i][0] == '-' || (argv[i][0] >= '0' && argv[i][0] <= '9'))) {
                int32_t v = (int32_t)strtol(argv[i++], NULL, 0);
                if (vol)
                    memcpy(s->buf + 4 * k, &v, 4);
                else
                    s->buf[k] = (uint8_t)v;
                k++;
            }
            unsigned op = vol           ? XENSND_OP_SET_VOLUME
                          : c[0] == 'm' ? XENSND_OP_MUTE
                                        : XENSND_OP_UNMUTE;
            result(c, rw(s, op, 0, vol ? 4 * k : k));
        } else if (!strcmp(c, "getvol")) {
            NEED(1);
            struct st *s = stream(argv[i++]);
            memset(s->buf, 0x55, 64);
            int st = rw(s, XENSND_OP_GET_VOLUME, 0, 64);
            if (!st) {
                int32_t v[2];
                memcpy(v, s->buf, 8);
                printf("volume %d %d\n", v[0], v[1]);
            }
            result("getvol", st);
        } else if (!strcmp(c, "raw")) {
            NEED(2);
            struct st *s = stream(argv[i]);
            struct xensnd_req r;
            memset(&r, 0, sizeof(r));
            r.operation = (uint8_t)strtoul(argv[i + 1], NULL, 0);
            i += 2;
            uint32_t *w = (uint32_t *)&r.op;
            for (unsigned k = 0; i < argc && k < 14 && argv[i][0] >= '0' && argv[i][0] <= '9'; k++)
                w[k] = (uint32_t)strtoul(argv[i++], NULL, 0);
            result("raw", roundtrip(s, &r, NULL));
        } else if (!strcmp(c, "hostile")) {
            NEED(2);
            hostile((unsigned)atoi(argv[i]), (unsigned)atoi(argv[i + 1]));
            i += 2;
        } else {
            die("unknown command %s", c);
        }
        expect_fail = false;
    }
    return 0;
}
