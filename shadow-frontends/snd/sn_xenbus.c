/* sn_xenbus.c - the card's sndif keys (see sn_xenbus.h). */
#define _GNU_SOURCE
#include "sn_xenbus.h"

#include "pv-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sn_backend_offers(struct sfx *x, unsigned v, char *seen, size_t len)
{
    char *s = xsu_read(sfx_xs(x), XBT_NULL, x->be, PVK_SND_VERSIONS, 64);
    snprintf(seen, len, "%s", s ? s : "");
    if (!s)
        return -1;
    int found = 0;
    char *save = NULL;
    for (char *t = strtok_r(s, ",", &save); t && !found; t = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(t, &end, 10);
        found = !errno && end != t && !*end && n == v;
    }
    free(s);
    return found;
}

struct keys {
    struct sfx *x;
    unsigned version;
    const struct sn_stream *st;
    unsigned n;
    bool standby;
};

/* The stream's dir relative to the device dir: "<pcm>/<stream>". */
static void rel(const struct sn_stream *s, char *buf, size_t len, const char *key)
{
    snprintf(buf, len, "%u/%u/%s", s->cfg.pcm_idx, s->cfg.idx, key);
}

static int write_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct keys *k = arg;
    const char *fe = k->x->fe;
    if (xsu_printf(xs, t, fe, PVK_SND_VERSION, "%u", k->version) < 0)
        return -1;
    for (unsigned i = 0; i < k->n; i++) {
        const struct sn_stream *s = &k->st[i];
        const struct sn_ring *r = k->standby ? &s->sb : &s->r;
        char key[64];
        rel(s, key, sizeof(key), PVK_RING_REF);
        if (xsu_printf(xs, t, fe, key, "%u", r->ring_ref) < 0)
            return -1;
        rel(s, key, sizeof(key), PVK_EVENT_CHANNEL);
        if (xsu_printf(xs, t, fe, key, "%u", r->port) < 0)
            return -1;
        rel(s, key, sizeof(key), PVK_SND_EVT_RING_REF);
        if (xsu_printf(xs, t, fe, key, "%u", r->evt_ref) < 0)
            return -1;
        rel(s, key, sizeof(key), PVK_SND_EVT_EVENT_CHANNEL);
        if (xsu_printf(xs, t, fe, key, "%u", r->evt_port) < 0)
            return -1;
    }
    return 0;
}

int sn_write_transport(struct sfx *x, unsigned version, const struct sn_stream *st, unsigned n,
                       bool standby)
{
    struct keys k = {.x = x, .version = version, .st = st, .n = n, .standby = standby};
    return xsu_txn(sfx_xs(x), write_keys, &k, NULL);
}

void sn_remove_transport(struct sfx *x, const struct sn_stream *st, unsigned n)
{
    static const char *const keys[] = {PVK_RING_REF, PVK_EVENT_CHANNEL, PVK_SND_EVT_RING_REF,
                                       PVK_SND_EVT_EVENT_CHANNEL};
    for (unsigned i = 0; i < n; i++)
        for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
            char key[64];
            rel(&st[i], key, sizeof(key), keys[j]);
            sfx_remove(x, key);
        }
}
