/* sb_connect.c - a connection: the frontend's version, and per stream its
 * request ring (ring-ref, event-channel) and, from version 2, its event
 * page (evt-ring-ref, evt-event-channel); the disconnect that undoes it.
 */
#define _GNU_SOURCE
#include "sb.h"

#include "xs_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* No version key: Linux's snd_xen_front writes none (seen on Debian 12's
 * kernel, tests/system's stock-sndfront pairing) though it speaks version 2;
 * its keys say which - an event page on its first stream is version 2's. */
static int infer_version(struct sb_dev *d)
{
    struct be_dev *be = d->be;
    if (!d->nr_streams) {
        be_error(be, ENOENT, "frontend %s/%s: absent, and no stream to tell the version by",
                 be_fe_path(be), XENSND_FIELD_FE_VERSION);
        return -1;
    }
    char *ref = xsu_read(be_xs(be), XBT_NULL, d->st[0].dir, XENSND_FIELD_EVT_RING_REF, 16);
    int e = errno;
    free(ref);
    if (!ref && e != ENOENT) {
        be_error(be, e, "frontend %s/%s: %s", d->st[0].dir, XENSND_FIELD_EVT_RING_REF, strerror(e));
        return -1;
    }
    d->version = ref ? 2 : 1;
    BE_LOG(be, "frontend %s wrote no %s: version %u by its keys (%s %s)", be_fe_path(be),
           XENSND_FIELD_FE_VERSION, d->version, XENSND_FIELD_EVT_RING_REF,
           ref ? "present" : "absent");
    return 0;
}

static int read_version(struct sb_dev *d)
{
    struct be_dev *be = d->be;
    char *v = xsu_read(be_xs(be), XBT_NULL, be_fe_path(be), XENSND_FIELD_FE_VERSION, 16);
    if (!v && errno == ENOENT)
        return infer_version(d);
    if (!v) {
        be_error(be, errno, "frontend %s/%s: %s (one of versions 1,2)", be_fe_path(be),
                 XENSND_FIELD_FE_VERSION, strerror(errno));
        return -1;
    }
    int rc = 0;
    if (!strcmp(v, "1") || !strcmp(v, "2")) {
        d->version = (unsigned)(v[0] - '0');
    } else {
        be_error(be, EPROTONOSUPPORT, "frontend %s/%s '%s': not one of versions 1,2",
                 be_fe_path(be), XENSND_FIELD_FE_VERSION, v);
        rc = -1;
    }
    free(v);
    return rc;
}

static void on_evt_page(struct be_dev *be, struct be_ring *r, void *opaque)
{
    /* The frontend tells of consumed events (or a hang ended): look at the PCM. */
    (void)be;
    (void)r;
    sb_pcm_kick(opaque);
}

static int attach_stream(struct sb_stream *s)
{
    struct be_dev *be = s->d->be;
    if (be_ring_map(be, s->dir, XENSND_FIELD_RING_REF, 1, false, &s->ring) < 0)
        return -1;
    RING_IDX rsp = be_ring_attach_at(&s->ring), req = be_ring_req_prod(&s->ring);
    BACK_RING_ATTACH(&s->br, (xen_sndif_sring_t *)s->ring.sring, rsp, SB_PAGE_SIZE);
    if (req - rsp > RING_SIZE(&s->br)) {
        be_error(be, EPROTO,
                 "%s/%s: ring indexes req_prod %u rsp_prod %u impossible on a ring of %u", s->dir,
                 XENSND_FIELD_RING_REF, req, rsp, RING_SIZE(&s->br));
        return -1;
    }
    s->attached = true;
    if (s->d->version >= 2) {
        if (be_ring_map(be, s->dir, XENSND_FIELD_EVT_RING_REF, 1, false, &s->evt) < 0 ||
            be_ring_bind(be, s->dir, XENSND_FIELD_EVT_EVT_CHNL, &s->evt, on_evt_page, s) < 0)
            return -1;
    }
    return be_ring_bind(be, s->dir, XENSND_FIELD_EVT_CHNL, &s->ring, sb_ring_event, s);
}

int sb_connect(struct be_dev *be)
{
    struct sb_dev *d = be_priv(be);
    if (read_version(d) < 0)
        return -1;
    for (unsigned i = 0; i < d->nr_streams; i++) {
        struct sb_stream *s = &d->st[i];
        s->broken = s->push = false;
        s->evt_id = 0;
        if (attach_stream(s) < 0)
            return -1;
    }
    BE_LOG(be, "connected: protocol version %u, %u stream%s", d->version, d->nr_streams,
           d->nr_streams == 1 ? "" : "s");
    /* Requests posted before we connected are served. */
    for (unsigned i = 0; i < d->nr_streams; i++)
        sb_ring_event(be, &d->st[i].ring, &d->st[i]);
    return 0;
}

void sb_disconnect(struct be_dev *be)
{
    struct sb_dev *d = be_priv(be);
    for (unsigned i = 0; i < d->nr_streams; i++) {
        struct sb_stream *s = &d->st[i];
        sb_close(s);
        be_ring_unmap(be, &s->evt);
        be_ring_unmap(be, &s->ring);
        s->attached = false;
    }
}
