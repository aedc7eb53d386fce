/* sb_open.c - OPEN: the parameters checked against what the stream
 * advertises, the grant directory walked (a chain of pages: next-page ref,
 * then refs; exactly ceil(buffer_sz / 4096) refs in all), the buffer mapped,
 * the PCM opened; CLOSE undoes it.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <xen/errno.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Refs held by one directory page after its next-page ref. */
#define SB_DIR_REFS ((SB_PAGE_SIZE - sizeof(grant_ref_t)) / sizeof(grant_ref_t))

static int bad_open(struct sb_stream *s, int st, const char *why)
{
    BE_LOG_RL(s->d->be, "stream %u/%u: OPEN refused: %s", s->pcm_idx, s->idx, why);
    return st;
}

/* Copy the n refs of the directory chain starting at ref into refs. */
static int read_directory(struct sb_stream *s, grant_ref_t ref, uint32_t *refs, unsigned n)
{
    xengnttab_handle *gt = be_gnttab(s->d->be);
    unsigned got = 0, pages = 0;
    while (got < n) {
        if (ref == 0 && pages > 0)
            return bad_open(s, -XEN_EINVAL, "grant directory ends before the buffer's refs");
        struct xensnd_page_directory *dir =
            xengnttab_map_grant_ref(gt, be_fe_domid(s->d->be), ref, PROT_READ);
        if (!dir) {
            BE_LOG_RL(s->d->be, "stream %u/%u: mapping grant directory page %u (ref %u): %s",
                      s->pcm_idx, s->idx, pages, ref, strerror(errno));
            return bad_open(s, -XEN_EINVAL, "a grant directory page cannot be mapped");
        }
        unsigned k = n - got < SB_DIR_REFS ? n - got : (unsigned)SB_DIR_REFS;
        volatile grant_ref_t *v = (volatile grant_ref_t *)dir;
        grant_ref_t next = v[0];
        for (unsigned i = 0; i < k; i++)
            refs[got + i] = v[1 + i];
        xengnttab_unmap(gt, dir, 1);
        got += k;
        pages++;
        ref = next;
    }
    return 0;
}

static int map_buffer(struct sb_stream *s, const struct xensnd_open_req *o)
{
    unsigned n = (o->buffer_sz + SB_PAGE_SIZE - 1) / SB_PAGE_SIZE;
    uint32_t *refs = calloc(n, sizeof(*refs));
    if (!refs)
        return bad_open(s, -XEN_ENOMEM, "out of memory");
    int st = read_directory(s, o->gref_directory, refs, n);
    if (st == 0) {
        s->buf = xengnttab_map_domain_grant_refs(be_gnttab(s->d->be), n, be_fe_domid(s->d->be),
                                                 refs, PROT_READ | PROT_WRITE);
        if (!s->buf) {
            BE_LOG_RL(s->d->be, "stream %u/%u: mapping the %u buffer pages: %s", s->pcm_idx, s->idx,
                      n, strerror(errno));
            st = bad_open(s, -XEN_EINVAL, "a buffer page cannot be mapped");
        } else {
            s->buf_pages = n;
        }
    }
    free(refs);
    return st;
}

int sb_open(struct sb_stream *s, const struct xensnd_open_req *o)
{
    struct xensnd_open_req r = *o;
    if (r.pcm_format >= SNDC_NR_FORMATS || !(s->p.formats & (1ull << r.pcm_format)))
        return bad_open(s, -XEN_EINVAL, "sample format not advertised");
    if (!sndc_has_rate(&s->p, r.pcm_rate))
        return bad_open(s, -XEN_EINVAL, "sample rate not advertised");
    if (r.pcm_channels < s->p.ch_min || r.pcm_channels > s->p.ch_max)
        return bad_open(s, -XEN_EINVAL, "channels outside channels-min..max");
    snd_pcm_format_t af = sndc_format_alsa(r.pcm_format);
    unsigned fb = (unsigned)snd_pcm_format_physical_width(af) / 8 * r.pcm_channels;
    if (r.buffer_sz == 0 || r.buffer_sz > s->p.buffer_size || r.buffer_sz % fb)
        return bad_open(s, -XEN_EINVAL,
                        "buffer_sz 0, over buffer-size or not a whole number of frames");
    if (r.period_sz > r.buffer_sz || r.period_sz % fb)
        return bad_open(s, -XEN_EINVAL, "period_sz over buffer_sz or not whole frames");
    int st = map_buffer(s, &r);
    if (st)
        return st;
    s->rate = r.pcm_rate;
    s->format = r.pcm_format;
    s->channels = r.pcm_channels;
    s->buffer_sz = r.buffer_sz;
    s->period_sz = r.period_sz;
    s->afmt = af;
    s->frame_bytes = fb;
    memset(s->vol, 0, sizeof(s->vol));
    memset(s->mute, 0, sizeof(s->mute));
    s->run = SB_STOPPED;
    s->evt_id = 0; /* events are numbered per open, as Linux's frontend counts them */
    s->open = true;
    if (sb_pcm_open(s) < 0) {
        sb_close(s);
        return bad_open(s, -XEN_EIO, "the PCM cannot be opened with these parameters");
    }
    BE_LOG(s->d->be, "stream %u/%u open: %s, %u Hz, %s, %u ch, buffer %u, period %u", s->pcm_idx,
           s->idx, sb_pcm_name(s), s->rate, sndc_format_name(s->format), s->channels, s->buffer_sz,
           s->period_sz);
    return 0;
}

void sb_close(struct sb_stream *s)
{
    sb_pcm_close(s);
    if (s->buf)
        xengnttab_unmap(be_gnttab(s->d->be), s->buf, s->buf_pages);
    s->buf = NULL;
    s->buf_pages = 0;
    if (s->open)
        BE_LOG(s->d->be, "stream %u/%u closed", s->pcm_idx, s->idx);
    s->open = false;
    s->run = SB_STOPPED;
}
