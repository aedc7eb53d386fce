/* sndhostile - a hostile sndif backend for the shadow sndfront's tests, run as
 * a driver domain's main process:
 *
 *   sndhostile BACKEND-DIR SEED SECONDS
 *
 * It plays the backend side of sndif over Debian's libxenstore, libxengnttab
 * and libxenevtchn: versions "1,2" and InitWait; at the frontend's
 * Initialised it maps every stream's ring and event page (the streams of the
 * card in the frontend dir: <pcm>/<stream>/ with a type), binds both ports
 * and goes Connected. Then, for SECONDS, it serves the streams correctly
 * (OPEN maps the grant directory chain read-only and the buffer, WRITE and
 * READ are answered, CUR_POS events numbered from 0 at each OPEN come once a
 * period from a clock at the stream's rate, never past what was written)
 * for a random while, then commits one act, chosen by the seed:
 *
 *   unknown-id, wrong-op, bad-status (positive or huge), dup-rsp (a request
 *   answered twice), rsp-prod (far ahead), evt-id (out of order), evt-type
 *   (unknown), pos-back (a position behind the last), pos-ahead (past what
 *   was written), in-prod (garbage on the event page), hang (nothing
 *   answered past the frontend's deadline, then the late answers), closing /
 *   closed / initwait (state changes unasked), versions (junk in its own
 *   versions key, then InitWait: the frontend reads the junk at its next
 *   setup; "1,2" again 1-2 s later); and two that break no rule: scribble
 *   (random bytes over the mapped buffer and the event page's spare slots)
 *   and refuse (an OPEN or WRITE answered with an sndif error status).
 *
 * After a rule-breaking act it goes quiet (no response, no event: the
 * garbage stays where the frontend will look) until the frontend closes.
 * When the frontend goes Closed it unmaps everything and goes Closed; at its
 * Initialising (or its Initialised, if it set up again at once) it starts
 * over, so one run sees many connections. Each act is judged by what the
 * frontend then did: closed within CHECK_MS with a new shadow/report of the
 * act's kind (HOSTILE-DETECTED), of another kind (HOSTILE-WRONG-KIND), with
 * none (HOSTILE-NO-REPORT), or not closed (HOSTILE-MISSED); a frontend that
 * closes when nothing was wrong is HOSTILE-UNPROVOKED (with its report).
 *
 * Output: one line per connection and per act, HOSTILE-SUMMARY with the
 * counts, then HOSTILE-OK. Every loop is bounded in count and in time.
 */
#define _GNU_SOURCE
#include "xen_barriers.h" /* before any xen/io header */
#include "pv-keys.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xen/io/sndif.h>
#include <xen/io/xenbus.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

#define PAGE         4096u
#define MAX_ST       16u
#define SH_RING_SIZE __CONST_RING_SIZE(xen_sndif, PAGE)
#define MAX_BUF_PG   4096u /* 16 MiB: sndif's largest buffer-size here */
#define DIR_REFS     ((PAGE - sizeof(grant_ref_t)) / sizeof(grant_ref_t))
#define CHECK_MS     5000u /* a misbehaviour's detection, at most */
#define HANG_MIN_MS  2000u /* past the frontend's deadline (the test gives it 1000 ms) */
#define REPORT_MS    1500u /* shadow/report follows the frontend's Closed */
#define XEN_EINVAL   22
#define XEN_ENOSYS   38

enum act {
    A_UNKNOWN_ID,
    A_WRONG_OP,
    A_BAD_STATUS,
    A_DUP_RSP,
    A_RSP_PROD,
    A_EVT_ID,
    A_EVT_TYPE,
    A_POS_BACK,
    A_POS_AHEAD,
    A_IN_PROD,
    A_HANG,
    A_CLOSING,
    A_CLOSED,
    A_INITWAIT,
    A_VERSIONS,
    A_SCRIBBLE,
    A_REFUSE,
    A_NR
};

static const char *const act_name[A_NR] = {
    "unknown-id", "wrong-op", "bad-status", "dup-rsp",  "rsp-prod", "evt-id",
    "evt-type",   "pos-back", "pos-ahead",  "in-prod",  "hang",     "closing",
    "closed",     "initwait", "versions",   "scribble", "refuse"};

/* The report kind the frontend should publish for each (NULL: no fault). */
static const char *expect_kind(enum act a)
{
    switch (a) {
    case A_HANG:
        return "timeout";
    case A_CLOSING:
    case A_CLOSED:
        return "backend-closed";
    case A_INITWAIT:
    case A_VERSIONS:
        return "backend-restarted";
    case A_SCRIBBLE:
    case A_REFUSE:
        return NULL;
    default:
        return "bad-response";
    }
}

struct stream {
    char dir[320];
    bool capture;
    xen_sndif_sring_t *sring;
    xen_sndif_back_ring_t br;
    struct xensnd_event_page *evt;
    uint32_t evt_prod; /* ours: in_prod as we last wrote it */
    evtchn_port_t port, evt_port;
    bool bound, evt_bound;
    /* The open stream. */
    bool open;
    uint8_t *buf;
    unsigned buf_pages;
    uint32_t buffer_sz, period_sz, fb, rate;
    uint16_t evt_id;
    uint64_t written;  /* playback: octets written since OPEN */
    uint64_t pos;      /* octets played (captured) since OPEN */
    uint64_t next_evt; /* the last period boundary reported */
    uint64_t reported; /* the last position sent */
    bool running;
    uint64_t t_ns, t_pos; /* the clock: position t_pos at t_ns */
};

struct hs {
    struct xs_handle *xs;
    xengnttab_handle *gt;
    xenevtchn_handle *xce;
    char be[256], fe[256];
    unsigned fe_id;
    struct stream st[MAX_ST];
    unsigned nst;
    bool connected;
    int ours; /* our XenbusState */
    uint64_t rng, t0;

    /* The misbehaviour in hand. */
    uint64_t next_bad_at; /* when to commit the next one (connected) */
    int pending;          /* a response-borne act waiting for a request, or -1 */
    uint64_t pending_since;
    int done; /* the act committed, waiting for the frontend, or -1 */
    uint64_t done_at;
    bool quiet; /* after it: nothing more on the rings */
    uint64_t hang_until;
    uint64_t junk_until; /* versions junk: put right after this (in InitWait) */
    bool junk;
    char report_before[300];

    unsigned long acts[A_NR], detected[A_NR], missed[A_NR], wrong_kind[A_NR], no_report[A_NR];
    unsigned long connects, rsps, events, unprovoked, map_errors;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t rnd(struct hs *h)
{
    /* xorshift64* */
    h->rng ^= h->rng >> 12;
    h->rng ^= h->rng << 25;
    h->rng ^= h->rng >> 27;
    return (uint32_t)((h->rng * 2685821657736338717ull) >> 32);
}

static void say(struct hs *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct hs *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("[%6.3f] ", (double)(now_ms() - h->t0) / 1000.0);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static char *rd(struct hs *h, const char *dir, const char *key)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/%s", dir, key);
    unsigned len;
    return xs_read(h->xs, XBT_NULL, p, &len);
}

static int rd_uint(struct hs *h, const char *dir, const char *key, unsigned long max,
                   unsigned long *out)
{
    char *v = rd(h, dir, key), *end;
    if (!v)
        return -1;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    int bad = errno || end == v || *end || v[0] == '-' || x > max;
    free(v);
    if (bad)
        return -1;
    *out = x;
    return 0;
}

static void wr(struct hs *h, const char *key, const char *val)
{
    char p[320];
    snprintf(p, sizeof(p), "%s/%s", h->be, key);
    if (!xs_write(h->xs, XBT_NULL, p, val, (unsigned)strlen(val)))
        say(h, "write %s: %s", p, strerror(errno));
}

static void set_state(struct hs *h, int st)
{
    char v[8];
    snprintf(v, sizeof(v), "%d", st);
    wr(h, PVK_STATE, v);
    h->ours = st;
}

static int fe_state(struct hs *h)
{
    unsigned long v;
    return rd_uint(h, h->fe, PVK_STATE, 255, &v) < 0 ? XenbusStateUnknown : (int)v;
}

/* The card's streams: <pcm>/<stream>/ dirs of the frontend dir with a type. */
static void find_streams(struct hs *h)
{
    h->nst = 0;
    unsigned n;
    char **pcms = xs_directory(h->xs, XBT_NULL, h->fe, &n);
    for (unsigned i = 0; pcms && i < n && i < 64; i++) {
        char *end;
        strtoul(pcms[i], &end, 10);
        if (end == pcms[i] || *end)
            continue;
        char d[280];
        snprintf(d, sizeof(d), "%s/%s", h->fe, pcms[i]);
        unsigned m;
        char **sts = xs_directory(h->xs, XBT_NULL, d, &m);
        for (unsigned k = 0; sts && k < m && k < 64 && h->nst < MAX_ST; k++) {
            strtoul(sts[k], &end, 10);
            if (end == sts[k] || *end)
                continue;
            struct stream *s = &h->st[h->nst];
            memset(s, 0, sizeof(*s));
            snprintf(s->dir, sizeof(s->dir), "%s/%s", d, sts[k]);
            char *t = rd(h, s->dir, PVK_SND_TYPE);
            if (!t)
                continue;
            s->capture = !strcmp(t, PVK_SND_TYPE_CAPTURE);
            free(t);
            h->nst++;
        }
        free(sts);
    }
    free(pcms);
}

/* ---- the transport ---- */

static void close_stream(struct hs *h, struct stream *s)
{
    if (s->buf)
        xengnttab_unmap(h->gt, s->buf, s->buf_pages);
    s->buf = NULL;
    s->buf_pages = 0;
    s->open = s->running = false;
}

static void disconnect(struct hs *h)
{
    for (unsigned i = 0; i < h->nst; i++) {
        struct stream *s = &h->st[i];
        close_stream(h, s);
        if (s->bound)
            xenevtchn_unbind(h->xce, s->port);
        if (s->evt_bound)
            xenevtchn_unbind(h->xce, s->evt_port);
        if (s->sring)
            xengnttab_unmap(h->gt, s->sring, 1);
        if (s->evt)
            xengnttab_unmap(h->gt, s->evt, 1);
        s->sring = NULL;
        s->evt = NULL;
        s->bound = s->evt_bound = false;
    }
    h->connected = false;
}

static int connect_stream(struct hs *h, struct stream *s)
{
    unsigned long rr, ev, er, ee;
    if (rd_uint(h, s->dir, PVK_RING_REF, UINT32_MAX, &rr) < 0 ||
        rd_uint(h, s->dir, PVK_EVENT_CHANNEL, UINT32_MAX, &ev) < 0 ||
        rd_uint(h, s->dir, PVK_SND_EVT_RING_REF, UINT32_MAX, &er) < 0 ||
        rd_uint(h, s->dir, PVK_SND_EVT_EVENT_CHANNEL, UINT32_MAX, &ee) < 0) {
        say(h, "stream %s: transport keys missing", s->dir);
        return -1;
    }
    s->sring = xengnttab_map_grant_ref(h->gt, h->fe_id, (uint32_t)rr, PROT_READ | PROT_WRITE);
    s->evt = xengnttab_map_grant_ref(h->gt, h->fe_id, (uint32_t)er, PROT_READ | PROT_WRITE);
    if (!s->sring || !s->evt) {
        say(h, "stream %s: map ring %lu / event page %lu: %s", s->dir, rr, er, strerror(errno));
        h->map_errors++;
        return -1;
    }
    xenevtchn_port_or_error_t p = xenevtchn_bind_interdomain(h->xce, h->fe_id, (uint32_t)ev);
    if (p < 0) {
        say(h, "stream %s: bind port %lu: %s", s->dir, ev, strerror(errno));
        return -1;
    }
    s->port = (evtchn_port_t)p;
    s->bound = true;
    p = xenevtchn_bind_interdomain(h->xce, h->fe_id, (uint32_t)ee);
    if (p < 0) {
        say(h, "stream %s: bind event port %lu: %s", s->dir, ee, strerror(errno));
        return -1;
    }
    s->evt_port = (evtchn_port_t)p;
    s->evt_bound = true;
    BACK_RING_ATTACH(&s->br, s->sring, __atomic_load_n(&s->sring->rsp_prod, __ATOMIC_ACQUIRE),
                     PAGE);
    s->evt_prod = __atomic_load_n(&s->evt->in_prod, __ATOMIC_ACQUIRE);
    s->open = s->running = false;
    return 0;
}

static int do_connect(struct hs *h)
{
    find_streams(h);
    if (!h->nst) {
        say(h, "%s: no streams", h->fe);
        return -1;
    }
    h->connected = true; /* so that disconnect undoes a part */
    for (unsigned i = 0; i < h->nst; i++)
        if (connect_stream(h, &h->st[i]) < 0) {
            disconnect(h);
            return -1;
        }
    h->connects++;
    h->pending = h->done = -1;
    h->quiet = false;
    h->hang_until = 0;
    h->next_bad_at = now_ms() + 300 + rnd(h) % 1700;
    say(h, "HOSTILE-CONNECT %lu: %u streams", h->connects, h->nst);
    return 0;
}

/* ---- serving ---- */

static unsigned fmt_bytes(unsigned f)
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
    case XENSND_PCM_FORMAT_F64_LE:
    case XENSND_PCM_FORMAT_F64_BE:
        return 8;
    default:
        return 4;
    }
}

/* OPEN as sndback does it: the directory chain mapped read-only a page at a
 * time, exactly ceil(buffer_sz / 4096) refs, then the buffer read-write. */
static int do_open(struct hs *h, struct stream *s, const struct xensnd_open_req *o)
{
    close_stream(h, s);
    unsigned fb = fmt_bytes(o->pcm_format) * o->pcm_channels;
    unsigned n = (o->buffer_sz + PAGE - 1) / PAGE;
    if (!fb || !o->pcm_rate || n == 0 || n > MAX_BUF_PG || o->period_sz > o->buffer_sz)
        return -XEN_EINVAL;
    uint32_t *refs = calloc(n, sizeof(*refs));
    if (!refs)
        return -XEN_EINVAL;
    grant_ref_t ref = o->gref_directory;
    unsigned got = 0;
    for (unsigned pages = 0; got < n && pages <= n; pages++) {
        if (ref == 0 && pages > 0)
            break;
        uint32_t *dir = xengnttab_map_grant_ref(h->gt, h->fe_id, ref, PROT_READ);
        if (!dir) {
            h->map_errors++;
            break;
        }
        unsigned k = n - got < DIR_REFS ? n - got : (unsigned)DIR_REFS;
        grant_ref_t next = ((volatile uint32_t *)dir)[0];
        for (unsigned i = 0; i < k; i++)
            refs[got + i] = ((volatile uint32_t *)dir)[1 + i];
        xengnttab_unmap(h->gt, dir, 1);
        got += k;
        ref = next;
    }
    if (got == n)
        s->buf = xengnttab_map_domain_grant_refs(h->gt, n, h->fe_id, refs, PROT_READ | PROT_WRITE);
    free(refs);
    if (!s->buf) {
        if (got == n)
            h->map_errors++;
        say(h, "stream %s: OPEN: buffer of %u pages not mapped (%u refs read)", s->dir, n, got);
        return -XEN_EINVAL;
    }
    s->buf_pages = n;
    s->buffer_sz = o->buffer_sz;
    s->period_sz = o->period_sz - o->period_sz % fb;
    s->fb = fb;
    s->rate = o->pcm_rate;
    s->evt_id = 0;
    s->written = s->pos = s->next_evt = s->reported = 0;
    s->running = false;
    s->open = true;
    return 0;
}

/* The clock: the position now (playback never past what was written). */
static void tick(struct stream *s, uint64_t t)
{
    if (!s->open || !s->running)
        return;
    uint64_t frames = (uint64_t)((unsigned __int128)(t - s->t_ns) * s->rate / 1000000000u);
    uint64_t p = s->t_pos + frames * s->fb;
    if (!s->capture && p >= s->written) {
        p = s->written; /* an underrun: the clock waits for audio */
        s->t_ns = t;
        s->t_pos = p;
    }
    if (p > s->pos)
        s->pos = p;
}

static int serve_req(struct hs *h, struct stream *s, const struct xensnd_req *q,
                     struct xensnd_resp *r)
{
    memset(r, 0, sizeof(*r));
    r->id = q->id;
    r->operation = q->operation;
    uint64_t t = now_ns();
    switch (q->operation) {
    case XENSND_OP_OPEN:
        return do_open(h, s, &q->op.open);
    case XENSND_OP_CLOSE:
        close_stream(h, s);
        return 0;
    case XENSND_OP_WRITE:
    case XENSND_OP_READ:
        if (!s->open || q->op.rw.offset > s->buffer_sz ||
            q->op.rw.length > s->buffer_sz - q->op.rw.offset)
            return -XEN_EINVAL;
        if (q->operation == XENSND_OP_WRITE)
            s->written += q->op.rw.length;
        else
            memset(s->buf + q->op.rw.offset, 0, q->op.rw.length);
        return 0;
    case XENSND_OP_SET_VOLUME:
    case XENSND_OP_GET_VOLUME:
    case XENSND_OP_MUTE:
    case XENSND_OP_UNMUTE:
        if (!s->open || q->op.rw.offset > s->buffer_sz ||
            q->op.rw.length > s->buffer_sz - q->op.rw.offset)
            return -XEN_EINVAL;
        if (q->operation == XENSND_OP_GET_VOLUME)
            memset(s->buf + q->op.rw.offset, 0, q->op.rw.length);
        return 0;
    case XENSND_OP_TRIGGER:
        if (!s->open)
            return -XEN_EINVAL;
        tick(s, t);
        switch (q->op.trigger.type) {
        case XENSND_OP_TRIGGER_START:
        case XENSND_OP_TRIGGER_RESUME:
            s->running = true;
            s->t_ns = t;
            s->t_pos = s->pos;
            return 0;
        case XENSND_OP_TRIGGER_PAUSE:
        case XENSND_OP_TRIGGER_STOP:
            s->running = false;
            return 0;
        default:
            return -XEN_EINVAL;
        }
    case XENSND_OP_HW_PARAM_QUERY:
        r->resp.hw_param = q->op.hw_param;
        return 0;
    default:
        return -XEN_ENOSYS;
    }
}

static void push_rsps(struct hs *h, struct stream *s)
{
    int notify;
    RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&s->br, notify);
    if (notify)
        xenevtchn_notify(h->xce, s->port);
}

static void put_evt(struct hs *h, struct stream *s, uint16_t id, uint8_t type, uint64_t pos)
{
    uint32_t cons = __atomic_load_n(&s->evt->in_cons, __ATOMIC_ACQUIRE);
    if (s->evt_prod - cons >= XENSND_IN_RING_LEN)
        return; /* full: dropped, as sndback drops it */
    struct xensnd_evt e;
    memset(&e, 0, sizeof(e));
    e.id = id;
    e.type = type;
    e.op.cur_pos.position = pos;
    memcpy(&XENSND_IN_RING_REF(s->evt, s->evt_prod), &e, sizeof(e));
    s->evt_prod++;
    /* the event /then/ the index */
    __atomic_store_n(&s->evt->in_prod, s->evt_prod, __ATOMIC_RELEASE);
    xenevtchn_notify(h->xce, s->evt_port);
    h->events++;
}

static void commit(struct hs *h, enum act a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The response-borne acts: the answer to q goes wrong. true if it was used. */
static bool spoil_rsp(struct hs *h, struct stream *s, struct xensnd_resp *r, bool more)
{
    switch (h->pending) {
    case A_UNKNOWN_ID: {
        uint16_t id = r->id;
        r->id = (uint16_t)(SH_RING_SIZE + rnd(h) % (65536 - SH_RING_SIZE));
        commit(h, A_UNKNOWN_ID, "answer to id %u (op %u) with id %u", id, r->operation, r->id);
        return true;
    }
    case A_WRONG_OP:
        r->operation = (uint8_t)((r->operation + 1 + rnd(h) % 9) % 10);
        commit(h, A_WRONG_OP, "answer to id %u with operation %u", r->id, r->operation);
        return true;
    case A_BAD_STATUS: {
        static const int32_t sts[] = {1, 7, 0x7fffffff, -4096, -100000, INT32_MIN};
        r->status = sts[rnd(h) % 6];
        commit(h, A_BAD_STATUS, "answer to id %u (op %u) with status %d", r->id, r->operation,
               r->status);
        return true;
    }
    case A_REFUSE: {
        /* sndif's own errors, to an OPEN or a WRITE: nothing wrong with the
         * protocol (a refused TRIGGER would leave a started stream silent) */
        static const int32_t sts[] = {-5, -12, -22, -95, -4095};
        if (r->operation != XENSND_OP_OPEN && r->operation != XENSND_OP_WRITE)
            return false;
        r->status = sts[rnd(h) % 5];
        if (r->operation == XENSND_OP_OPEN)
            close_stream(h, s);
        commit(h, A_REFUSE, "answer to id %u (op %u) with status %d", r->id, r->operation,
               r->status);
        return true;
    }
    case A_DUP_RSP:
        if (!more)
            return false; /* another request must be there to answer in its place */
        *RING_GET_RESPONSE(&s->br, s->br.rsp_prod_pvt) = *r;
        s->br.rsp_prod_pvt++;
        s->br.req_cons++; /* the next request: answered with the duplicate */
        commit(h, A_DUP_RSP, "id %u (op %u) answered twice", r->id, r->operation);
        return true;
    default:
        return false;
    }
}

static void serve_stream(struct hs *h, struct stream *s)
{
    RING_IDX rp = __atomic_load_n(&s->sring->req_prod, __ATOMIC_ACQUIRE);
    if (rp - s->br.req_cons > SH_RING_SIZE) {
        say(h, "stream %s: req_prod %u with req_cons %u: ignored", s->dir, rp, s->br.req_cons);
        return;
    }
    bool any = false;
    for (unsigned n = 0; n < 4 * SH_RING_SIZE && !h->quiet;) {
        while (s->br.req_cons != rp && n < 4 * SH_RING_SIZE && !h->quiet) {
            struct xensnd_req q;
            RING_COPY_REQUEST(&s->br, s->br.req_cons, &q);
            s->br.req_cons++;
            n++;
            struct xensnd_resp r;
            r.status = serve_req(h, s, &q, &r);
            /* A spoiled answer goes out, and nothing after it (quiet). */
            if (h->pending >= 0)
                spoil_rsp(h, s, &r, s->br.req_cons != rp);
            *RING_GET_RESPONSE(&s->br, s->br.rsp_prod_pvt) = r;
            s->br.rsp_prod_pvt++;
            h->rsps++;
            any = true;
        }
        if (h->quiet)
            break;
        int more;
        RING_FINAL_CHECK_FOR_REQUESTS(&s->br, more);
        if (!more)
            break;
        rp = __atomic_load_n(&s->sring->req_prod, __ATOMIC_ACQUIRE);
        if (rp - s->br.req_cons > SH_RING_SIZE)
            break;
    }
    if (any)
        push_rsps(h, s);
}

static void events(struct hs *h, struct stream *s)
{
    if (!s->open || !s->running || !s->period_sz)
        return;
    tick(s, now_ns());
    for (unsigned k = 0; k < 8 && s->pos >= s->next_evt + s->period_sz; k++) {
        s->next_evt += s->period_sz;
        s->reported = s->next_evt;
        put_evt(h, s, s->evt_id++, XENSND_EVT_CUR_POS, s->next_evt);
    }
}

/* ---- misbehaving ---- */

static void commit(struct hs *h, enum act a, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    h->acts[a]++;
    h->pending = -1;
    if (expect_kind(a)) {
        h->done = (int)a;
        h->done_at = now_ms();
        h->quiet = a != A_HANG; /* a hang ends by itself, the rest stay broken */
    }
    say(h, "HOSTILE %s: %s", act_name[a], what);
}

static struct stream *open_playback(struct hs *h)
{
    for (unsigned i = 0; i < h->nst; i++)
        if (h->st[i].open && !h->st[i].capture && h->st[i].running)
            return &h->st[i];
    return NULL;
}

static struct stream *any_stream(struct hs *h)
{
    return &h->st[rnd(h) % h->nst];
}

/* Commit act a now if it can be; false if its condition does not hold yet. */
static bool misbehave(struct hs *h, enum act a)
{
    struct stream *s = open_playback(h);
    switch (a) {
    case A_UNKNOWN_ID:
    case A_WRONG_OP:
    case A_BAD_STATUS:
    case A_DUP_RSP:
    case A_REFUSE:
        h->pending = (int)a; /* on the next request answered */
        h->pending_since = now_ms();
        return true;
    case A_RSP_PROD: {
        struct stream *t = any_stream(h);
        RING_IDX garbage = t->br.rsp_prod_pvt + SH_RING_SIZE + 1 + rnd(h) % 1000000;
        __atomic_store_n(&t->sring->rsp_prod, garbage, __ATOMIC_RELEASE);
        xenevtchn_notify(h->xce, t->port);
        commit(h, A_RSP_PROD, "stream %s: rsp_prod %u (answered up to %u)", t->dir, garbage,
               t->br.rsp_prod_pvt);
        return true;
    }
    case A_EVT_ID: {
        /* On a stream we opened: the frontend drops what is on the page when
         * it opens one (and cannot while we are quiet: its CLOSE waits). */
        struct stream *t = s;
        if (!t)
            return false;
        uint16_t id = (uint16_t)(t->evt_id + 1 + rnd(h) % 1000);
        put_evt(h, t, id, XENSND_EVT_CUR_POS, t->reported);
        commit(h, A_EVT_ID, "stream %s: event id %u where %u is next", t->dir, id, t->evt_id);
        return true;
    }
    case A_EVT_TYPE: {
        struct stream *t = s;
        if (!t)
            return false;
        uint8_t type = (uint8_t)(1 + rnd(h) % 255);
        put_evt(h, t, t->evt_id, type, t->reported);
        commit(h, A_EVT_TYPE, "stream %s: event %u of type %u", t->dir, t->evt_id, type);
        return true;
    }
    case A_POS_BACK: {
        if (!s || s->reported < s->fb)
            return false;
        uint64_t p = s->reported - s->fb * (1 + rnd(h) % (s->reported / s->fb));
        put_evt(h, s, s->evt_id++, XENSND_EVT_CUR_POS, p);
        commit(h, A_POS_BACK, "stream %s: position %" PRIu64 " after %" PRIu64, s->dir, p,
               s->reported);
        return true;
    }
    case A_POS_AHEAD: {
        if (!s)
            return false;
        /* past anything the frontend can have sent: what we took plus a buffer */
        uint64_t p = s->written + s->buffer_sz + s->fb * (1 + rnd(h) % 100000);
        p -= p % s->fb;
        put_evt(h, s, s->evt_id++, XENSND_EVT_CUR_POS, p);
        commit(h, A_POS_AHEAD, "stream %s: position %" PRIu64 " with %" PRIu64 " written", s->dir,
               p, s->written);
        return true;
    }
    case A_IN_PROD: {
        struct stream *t = s;
        if (!t)
            return false;
        uint32_t cons = __atomic_load_n(&t->evt->in_cons, __ATOMIC_ACQUIRE);
        uint32_t garbage = cons + (uint32_t)XENSND_IN_RING_LEN + 1 + rnd(h) % 1000000;
        __atomic_store_n(&t->evt->in_prod, garbage, __ATOMIC_RELEASE);
        xenevtchn_notify(h->xce, t->evt_port);
        commit(h, A_IN_PROD, "stream %s: in_prod %u with in_cons %u", t->dir, garbage, cons);
        return true;
    }
    case A_HANG: {
        if (!s)
            return false; /* the frontend has nothing to wait for */
        unsigned ms = HANG_MIN_MS + rnd(h) % 1000;
        h->hang_until = now_ms() + ms;
        commit(h, A_HANG, "nothing answered for %u ms", ms);
        return true;
    }
    case A_CLOSING:
    case A_CLOSED:
    case A_INITWAIT:
        commit(h, a, "state %s unasked",
               a == A_CLOSING  ? "Closing"
               : a == A_CLOSED ? "Closed"
                               : "InitWait");
        set_state(h, a == A_CLOSING  ? XenbusStateClosing
                     : a == A_CLOSED ? XenbusStateClosed
                                     : XenbusStateInitWait);
        return true;
    case A_VERSIONS: {
        static const char *const junk[] = {"", "x", "3,4", "1", "2x", ",,,", "-2", "99999999999"};
        const char *j = junk[rnd(h) % 8];
        wr(h, PVK_SND_VERSIONS, j);
        h->junk = true;
        h->junk_until = 0;
        commit(h, A_VERSIONS, "versions '%s', then InitWait unasked", j);
        set_state(h, XenbusStateInitWait);
        return true;
    }
    case A_SCRIBBLE: {
        unsigned n = 0;
        for (unsigned i = 0; i < h->nst; i++) {
            struct stream *t = &h->st[i];
            if (t->buf) {
                unsigned pg = rnd(h) % t->buf_pages, cnt = 1 + rnd(h) % (t->buf_pages - pg);
                for (size_t b = 0; b < (size_t)cnt * PAGE; b += 4) {
                    uint32_t w = rnd(h);
                    memcpy(t->buf + (size_t)pg * PAGE + b, &w, 4);
                }
                n += cnt;
            }
            /* the event slots past in_prod: not events yet */
            for (uint32_t k = t->evt_prod + 1; k < t->evt_prod + 8; k++) {
                uint8_t junk[sizeof(struct xensnd_evt)];
                for (size_t b = 0; b < sizeof(junk); b++)
                    junk[b] = (uint8_t)rnd(h);
                uint32_t cons = __atomic_load_n(&t->evt->in_cons, __ATOMIC_ACQUIRE);
                if (k - cons < XENSND_IN_RING_LEN)
                    memcpy(&XENSND_IN_RING_REF(t->evt, k), junk, sizeof(junk));
            }
        }
        commit(h, A_SCRIBBLE, "random bytes over %u buffer pages and spare event slots", n);
        return true;
    }
    default:
        return true;
    }
}

static void schedule(struct hs *h, uint64_t now)
{
    if (h->pending >= 0 && now - h->pending_since > 2000) {
        say(h, "%s: no request to answer in 2 s; given up", act_name[h->pending]);
        h->pending = -1;
    }
    if (h->pending >= 0 || h->done >= 0 || now < h->next_bad_at)
        return;
    /* Not before the frontend has taken our Connected: an act during its
     * handshake is only a failed handshake to it, never reported. */
    if (fe_state(h) != XenbusStateConnected) {
        h->next_bad_at = now + 100;
        return;
    }
    /* What the frontend last reported: the act's report will differ. */
    char *r = rd(h, h->fe, "shadow/report");
    snprintf(h->report_before, sizeof(h->report_before), "%s", r ? r : "");
    free(r);
    for (unsigned tries = 0; tries < 4; tries++)
        if (misbehave(h, (enum act)(rnd(h) % A_NR)))
            break;
    h->next_bad_at = now + 500 + rnd(h) % 1500; /* if the frontend stays */
}

/* The frontend's report after report_before (its state goes Closed before
 * the report is written): malloc'ed, NULL if none came within REPORT_MS. */
static char *new_report(struct hs *h)
{
    char *r = NULL;
    for (uint64_t end = now_ms() + REPORT_MS; now_ms() < end; usleep(20000)) {
        free(r);
        r = rd(h, h->fe, "shadow/report");
        if (r && strcmp(r, h->report_before)) {
            snprintf(h->report_before, sizeof(h->report_before), "%s", r);
            return r;
        }
    }
    free(r);
    return NULL;
}

/* The frontend closed, or the time for it passed: what it made of the act. */
static void judge(struct hs *h, bool closed)
{
    uint64_t now = now_ms();
    if (h->done < 0) {
        if (!closed)
            return;
        char *r = new_report(h);
        h->unprovoked++;
        say(h, "HOSTILE-UNPROVOKED close: the frontend closed while nothing was wrong: '%s'",
            r ? r : "");
        free(r);
        return;
    }
    enum act a = (enum act)h->done;
    if (!closed && now - h->done_at < CHECK_MS)
        return;
    h->done = -1;
    if (!closed) {
        h->missed[a]++;
        say(h, "HOSTILE-MISSED %s: the frontend still connected after %u ms", act_name[a],
            CHECK_MS);
        h->quiet = false;
        return;
    }
    /* Acts come only once the card was connected: every fault is reported. */
    char *r = new_report(h);
    const char *want = expect_kind(a), *sp = r ? strchr(r, ' ') : NULL;
    bool kind_ok = sp && !strncmp(sp + 1, want, strlen(want)) && sp[1 + strlen(want)] == ' ';
    if (kind_ok)
        h->detected[a]++;
    else if (r)
        h->wrong_kind[a]++;
    else
        h->no_report[a]++;
    say(h, "HOSTILE-%s %s: closed after %" PRIu64 " ms, report '%s'",
        kind_ok ? "DETECTED"
        : r     ? "WRONG-KIND"
                : "NO-REPORT",
        act_name[a], now - h->done_at, r ? r : "");
    free(r);
}

/* ---- the handshake ---- */

static void handshake(struct hs *h)
{
    int fst = fe_state(h);
    uint64_t now = now_ms();
    if (fst == XenbusStateClosed || fst == XenbusStateClosing || fst == XenbusStateUnknown) {
        if (h->ours != XenbusStateClosed) {
            bool was = h->connected;
            disconnect(h);
            set_state(h, XenbusStateClosed);
            if (was || h->done >= 0)
                judge(h, true);
        }
    } else if (fst == XenbusStateInitialising) {
        if (h->ours != XenbusStateInitWait) {
            if (h->connected || h->done >= 0) {
                disconnect(h);
                judge(h, true);
            }
            if (!h->junk)
                wr(h, PVK_SND_VERSIONS, "1,2");
            else if (!h->junk_until)
                h->junk_until = now + 1000 + rnd(h) % 1000;
            set_state(h, XenbusStateInitWait);
        }
    } else if ((fst == XenbusStateInitialised || fst == XenbusStateConnected) &&
               h->ours == XenbusStateInitWait && !h->junk) {
        /* Initialised while we still hold a connection: the frontend closed
         * and set up again at once (it does, seeing us in InitWait) before we
         * looked. What we hold is the old transport. */
        if (h->connected && fst == XenbusStateInitialised) {
            disconnect(h);
            judge(h, true);
        }
        if (!h->connected && do_connect(h) == 0)
            set_state(h, XenbusStateConnected);
    }
    if (h->junk && h->ours == XenbusStateInitWait && h->junk_until && now >= h->junk_until) {
        wr(h, PVK_SND_VERSIONS, "1,2");
        h->junk = false;
        say(h, "versions '1,2' again");
    }
}

/* Ack what the event channel has (bounded: poll says again if more is). */
static void ack_ports(struct hs *h)
{
    for (unsigned k = 0; k < 64; k++) {
        struct pollfd p = {.fd = xenevtchn_fd(h->xce), .events = POLLIN};
        if (poll(&p, 1, 0) <= 0)
            return;
        xenevtchn_port_or_error_t port = xenevtchn_pending(h->xce);
        if (port < 0)
            return;
        xenevtchn_unmask(h->xce, (evtchn_port_t)port);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: sndhostile BACKEND-DIR SEED SECONDS\n");
        return 2;
    }
    char *end;
    unsigned long long seed = strtoull(argv[2], &end, 10);
    unsigned long seconds = strtoul(argv[3], &end, 10);
    if (strlen(argv[1]) >= 256 || *end || seconds == 0 || seconds > 3600) {
        fprintf(stderr, "sndhostile: bad arguments (SECONDS 1..3600)\n");
        return 2;
    }
    static struct hs h;
    snprintf(h.be, sizeof(h.be), "%s", argv[1]);
    h.rng = seed * 0x9e3779b97f4a7c15ull + 1;
    h.t0 = now_ms();
    h.pending = h.done = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    h.xs = xs_open(0);
    h.gt = xengnttab_open(NULL, 0);
    h.xce = xenevtchn_open(NULL, 0);
    if (!h.xs || !h.gt || !h.xce) {
        fprintf(stderr, "sndhostile: open xenstore/gnttab/evtchn: %s\n", strerror(errno));
        return 1;
    }
    char *fe = rd(&h, h.be, PVK_FRONTEND);
    unsigned long fe_id;
    if (!fe || strlen(fe) >= sizeof(h.fe) ||
        rd_uint(&h, h.be, PVK_FRONTEND_ID, 32767, &fe_id) < 0) {
        fprintf(stderr, "sndhostile: %s: no usable frontend, frontend-id\n", h.be);
        free(fe);
        return 1;
    }
    snprintf(h.fe, sizeof(h.fe), "%s", fe);
    free(fe);
    h.fe_id = (unsigned)fe_id;
    char wpath[300];
    snprintf(wpath, sizeof(wpath), "%s/%s", h.fe, PVK_STATE);
    if (!xs_watch(h.xs, wpath, "fe"))
        say(&h, "watch %s: %s (polling it)", wpath, strerror(errno));
    wr(&h, PVK_SND_VERSIONS, "1,2");
    set_state(&h, XenbusStateInitWait);
    say(&h, "seed %llu, %lu s, backend %s, frontend %s", seed, seconds, h.be, h.fe);

    uint64_t stop = now_ms() + seconds * 1000u, last_look = 0;
    while (now_ms() < stop) {
        struct pollfd p[2] = {{.fd = xs_fileno(h.xs), .events = POLLIN},
                              {.fd = xenevtchn_fd(h.xce), .events = POLLIN}};
        poll(p, 2, 5);
        bool look = false;
        for (unsigned k = 0; k < 64; k++) {
            char **w = xs_check_watch(h.xs);
            if (!w)
                break;
            free(w);
            look = true;
        }
        if (p[1].revents & POLLIN)
            ack_ports(&h);
        uint64_t now = now_ms();
        if (look || now - last_look >= 100) {
            last_look = now;
            handshake(&h);
        }
        if (h.done >= 0)
            judge(&h, false);
        if (!h.connected || h.ours != XenbusStateConnected)
            continue;
        if (h.hang_until) {
            if (now < h.hang_until)
                continue;
            h.hang_until = 0;
            say(&h, "hang over");
        }
        if (!h.quiet)
            for (unsigned i = 0; i < h.nst; i++) {
                serve_stream(&h, &h.st[i]);
                if (!h.quiet)
                    events(&h, &h.st[i]);
            }
        if (!h.quiet)
            schedule(&h, now);
    }
    disconnect(&h);
    printf("HOSTILE-SUMMARY seed=%llu connects=%lu responses=%lu events=%lu unprovoked=%lu "
           "map-errors=%lu",
           seed, h.connects, h.rsps, h.events, h.unprovoked, h.map_errors);
    unsigned long detected = 0, missed = 0, wrong = 0, none = 0;
    for (unsigned a = 0; a < A_NR; a++) {
        printf(" %s=%lu", act_name[a], h.acts[a]);
        if (h.missed[a] || h.wrong_kind[a] || h.no_report[a])
            printf("(missed %lu wrong-kind %lu no-report %lu)", h.missed[a], h.wrong_kind[a],
                   h.no_report[a]);
        detected += h.detected[a];
        missed += h.missed[a];
        wrong += h.wrong_kind[a];
        none += h.no_report[a];
    }
    printf(" detected=%lu missed=%lu wrong-kind=%lu no-report=%lu\n", detected, missed, wrong,
           none);
    printf("HOSTILE-OK\n");
    xenevtchn_close(h.xce);
    xengnttab_close(h.gt);
    xs_close(h.xs);
    return 0;
}
