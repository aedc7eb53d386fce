/* sndif_req - sndback's handling of sndif requests (backends/snd/): the
 * frontend's ring as sb_ring_event consumes it (producer index checked, each
 * request copied out, sb_dispatch), every operation's checks (sb_dispatch.c:
 * READ/WRITE against the open buffer, volume and mute values; sb_open.c: OPEN
 * against what the stream advertises and the grant directory chain walked;
 * sb_query.c: HW_PARAM_QUERY ranges; sb_pcm.c: TRIGGER), with ALSA's "null"
 * PCM behind the stream (its capture paced to a period per wakeup). The backend core's plumbing
 * (be_*: the ring's producer index, publication, logs) and the grant maps are stand-ins here; the
 * frontend's granted pages (grant directory, buffer) come from the input.
 *
 * Input: a stream byte (capture, parameters), 8 pages' worth of granted
 * memory prefixes, then rounds: requests (64 bytes each) and a req_prod. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "sb.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

/* ---- the frontend's granted pages: refs 1..NPAGES ---- */
#define NPAGES 24
static uint8_t *fe_mem;

static uint8_t *fe_page(uint32_t ref)
{
    if (ref == 0 || ref > NPAGES) {
        errno = EINVAL;
        return NULL;
    }
    return fe_mem + (size_t)(ref - 1) * SB_PAGE_SIZE;
}

void *xengnttab_map_grant_ref(xengnttab_handle *xgt, uint32_t domid, uint32_t ref, int prot)
{
    (void)xgt;
    (void)domid;
    (void)prot;
    uint8_t *pg = fe_page(ref);
    if (!pg)
        return NULL;
    uint8_t *m = aligned_alloc(SB_PAGE_SIZE, SB_PAGE_SIZE);
    if (m)
        memcpy(m, pg, SB_PAGE_SIZE);
    return m;
}

void *xengnttab_map_domain_grant_refs(xengnttab_handle *xgt, uint32_t count, uint32_t domid,
                                      uint32_t *refs, int prot)
{
    (void)xgt;
    (void)domid;
    (void)prot;
    for (uint32_t i = 0; i < count; i++)
        if (!fe_page(refs[i]))
            return NULL;
    uint8_t *m = aligned_alloc(SB_PAGE_SIZE, (size_t)count * SB_PAGE_SIZE);
    if (!m)
        return NULL;
    for (uint32_t i = 0; i < count; i++)
        memcpy(m + (size_t)i * SB_PAGE_SIZE, fe_page(refs[i]), SB_PAGE_SIZE);
    return m;
}

int xengnttab_unmap(xengnttab_handle *xgt, void *start_address, uint32_t count)
{
    (void)xgt;
    (void)count;
    free(start_address);
    return 0;
}

/* ---- the backend core's plumbing ---- */
struct be_dev {
    struct be_log log;
    struct be_loop *loop;
};

struct xs_handle *be_xs(struct be_dev *be)
{
    (void)be;
    return NULL;
}

xengnttab_handle *be_gnttab(struct be_dev *be)
{
    (void)be;
    return NULL;
}

struct be_loop *be_loop_of(struct be_dev *be)
{
    return be->loop;
}

struct be_log *be_logger(struct be_dev *be)
{
    return &be->log;
}

const char *be_fe_path(struct be_dev *be)
{
    (void)be;
    return "/local/domain/1/device/vsnd/0";
}

unsigned be_fe_domid(struct be_dev *be)
{
    (void)be;
    return 1;
}

void be_fail(struct be_dev *be, int err, const char *fmt, ...)
{
    (void)be;
    (void)err;
    (void)fmt;
}

void be_ring_notify(struct be_dev *be, struct be_ring *r)
{
    (void)be;
    (void)r;
}

RING_IDX be_ring_req_prod(const struct be_ring *r)
{
    return __atomic_load_n(&((xen_sndif_sring_t *)r->sring)->req_prod, __ATOMIC_ACQUIRE);
}

void be_ring_publish(struct be_dev *be, struct be_ring *r, RING_IDX rsp_prod_pvt)
{
    (void)be;
    ((xen_sndif_sring_t *)r->sring)->rsp_prod = rsp_prod_pvt;
}

bool be_fault_hung(struct be_dev *be)
{
    (void)be;
    return false;
}

void be_log_line(struct be_log *lg, const char *fmt, ...)
{
    (void)lg;
    (void)fmt;
}

void be_log_limited(struct be_log *lg, const char *fmt, ...)
{
    (void)lg;
    (void)fmt;
}

/* ---- ALSA's "null" PCM, paced ----
 * It captures as fast as it is read, where a card delivers a period per
 * period of time: capture() would read forever. Here it delivers one
 * period per wakeup, then EAGAIN until the next. */
static snd_pcm_sframes_t (*real_readi)(snd_pcm_t *, void *, snd_pcm_uframes_t);
static bool delivered;

snd_pcm_sframes_t snd_pcm_readi(snd_pcm_t *pcm, void *buffer, snd_pcm_uframes_t size)
{
    if (delivered) {
        delivered = false;
        return -EAGAIN;
    }
    delivered = true;
    return real_readi(pcm, buffer, size);
}

/* ---- the target ---- */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* ALSA reads its configuration once and keeps it: do that before any input. */
    real_readi = (snd_pcm_sframes_t(*)(snd_pcm_t *, void *, snd_pcm_uframes_t))dlsym(
        RTLD_NEXT, "snd_pcm_readi");
    if (!real_readi)
        return -1;
    snd_pcm_t *h;
    if (snd_pcm_open(&h, "null", SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK) == 0)
        snd_pcm_close(h);
    fe_mem = aligned_alloc(SB_PAGE_SIZE, (size_t)NPAGES * SB_PAGE_SIZE);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    static struct be_dev be;
    if (!be.loop)
        be.loop = be_loop_new();
    static struct sb_dev d;
    memset(&d, 0, sizeof(d));
    d.be = &be;
    d.version = 2;
    d.nr_streams = 1;
    struct sb_stream *s = &d.st[0];
    s->d = &d;
    snprintf(s->pcm_name, sizeof(s->pcm_name), "null");

    uint8_t sb = fz_u8(&f);
    s->capture = sb & 1;
    static const uint32_t rates[] = {8000, 22050, 44100, 48000};
    s->p.nr_rates = sb & 2 ? 4 : 1;
    memcpy(s->p.rates, sb & 2 ? rates : &rates[2], s->p.nr_rates * sizeof(rates[0]));
    s->p.formats = sb & 4 ? (1ull << XENSND_PCM_FORMAT_S16_LE) | (1ull << XENSND_PCM_FORMAT_U8) |
                                (1ull << XENSND_PCM_FORMAT_S32_LE)
                          : 1ull << XENSND_PCM_FORMAT_S16_LE;
    s->p.ch_min = 1;
    s->p.ch_max = sb & 8 ? 8 : 2;
    s->p.buffer_size = sb & 16 ? 65536 : 16384;

    /* The frontend's pages: a prefix of each from the input, zeros after. */
    memset(fe_mem, 0, (size_t)NPAGES * SB_PAGE_SIZE);
    for (unsigned i = 0; i < 8; i++)
        fz_bytes(&f, fe_mem + (size_t)i * SB_PAGE_SIZE, 16);

    static uint8_t ring[SB_PAGE_SIZE] __attribute__((aligned(4096)));
    static uint8_t evt[SB_PAGE_SIZE] __attribute__((aligned(4096)));
    memset(ring, 0, sizeof(ring));
    memset(evt, 0, sizeof(evt));
    xen_sndif_sring_t *sr = (xen_sndif_sring_t *)ring;
    SHARED_RING_INIT(sr);
    BACK_RING_INIT(&s->br, sr, SB_PAGE_SIZE);
    s->ring.sring = sr;
    s->evt.sring = evt;
    s->attached = true;

    RING_IDX prod = 0;
    while (fz_left(&f) && !s->broken) {
        uint8_t n = fz_u8(&f) % 5;
        for (uint8_t i = 0; i < n; i++) {
            struct xensnd_req q;
            fz_bytes(&f, &q, sizeof(q));
            uint8_t sel = q.reserved[0];
            if (sel < 0xe0)
                q.operation %= XENSND_OP_HW_PARAM_QUERY + 1;
            if (q.operation == XENSND_OP_OPEN && sel < 0xc0)
                q.op.open.gref_directory = sel % 4 + 1;
            *RING_GET_REQUEST(&s->br, prod) = q;
            prod++;
        }
        uint8_t how = fz_u8(&f);
        sr->req_prod = how < 0xf8 ? prod : fz_u32(&f);
        RING_IDX before = s->br.rsp_prod_pvt;
        sb_ring_event(&be, &s->ring, s);
        for (RING_IDX i = before; i != s->br.rsp_prod_pvt; i++) {
            const struct xensnd_resp *r = RING_GET_RESPONSE(&s->br, i);
            FZ_CHECK(r->status <= 0);
            if (r->operation == XENSND_OP_HW_PARAM_QUERY && r->status == 0) {
                const struct xensnd_query_hw_param *h = &r->resp.hw_param;
                FZ_CHECK(h->rates.min <= h->rates.max && h->channels.min <= h->channels.max);
                FZ_CHECK(h->buffer.min <= h->buffer.max && h->period.min <= h->period.max);
                FZ_CHECK(h->formats && !(h->formats & ~s->p.formats));
            }
        }
        if (s->open)
            FZ_CHECK(s->buf && s->buffer_sz && s->buffer_sz <= s->p.buffer_size);
    }
    sb_close(s);
    return 0;
}
