/* nf_link.c - one transport of the NIC: its queues shared with one backend
 * domain and its keys (see nf_link.h). */
#define _GNU_SOURCE
#include "nf_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nf_link_negotiate(struct nf_link *l, struct sfx *x, const uint8_t mac[6], char *why, size_t len)
{
    const char *key;
    if (nf_read_features(x, &l->feat, &key) < 0) {
        snprintf(why, len, "%s: %s", key, strerror(errno));
        return -1;
    }
    if (l->feat.has_mac && memcmp(l->feat.mac, mac, 6)) {
        snprintf(why, len, "the backend serves another NIC (its mac differs from ours)");
        return 1;
    }
    /* A slot's mac is the toolstack's copy of ours: one that differs says
     * the slot was written for another NIC. */
    uint8_t dm[6];
    if (nf_read_fe_mac(x, dm) == 0 && memcmp(dm, mac, 6)) {
        snprintf(why, len, "%s/mac is not the NIC's mac", x->dev);
        return 1;
    }
    return 0;
}

int nf_link_share(struct nf_link *l, xengntshr_handle *gs, xenevtchn_handle *xce, struct sfx *x,
                  const struct nf_link_want *want, unsigned tap_nq, char *why, size_t len)
{
    unsigned nq = want->queues < l->feat.max_queues ? want->queues : l->feat.max_queues;
    if (nq > tap_nq)
        nq = tap_nq;
    if (nq > NF_MAX_QUEUES)
        nq = NF_MAX_QUEUES;
    if (nq == 0)
        nq = 1;
    uint32_t tx_refs[NF_MAX_QUEUES], rx_refs[NF_MAX_QUEUES];
    unsigned ports[NF_MAX_QUEUES];
    for (unsigned k = 0; k < nq; k++) {
        l->q[k] = calloc(1, sizeof(*l->q[k]));
        if (!l->q[k]) {
            snprintf(why, len, "out of memory for a connection");
            errno = ENOMEM;
            goto fail;
        }
        l->nq = k + 1;
        if (nf_conn_setup(l->q[k], gs, xce, x->be_id) < 0) {
            snprintf(why, len, "queue %u: share rings and buffers with domain %u, bind a port: %s",
                     k, x->be_id, strerror(errno));
            goto fail;
        }
        l->q[k]->track = want->track;
        tx_refs[k] = l->q[k]->tx_ref;
        rx_refs[k] = l->q[k]->rx_ref;
        ports[k] = l->q[k]->port;
    }
    l->filter_on = l->feat.mcast && want->filter;
    if (nf_write_transport(x, nq, tx_refs, rx_refs, ports, l->filter_on, want->offloads) < 0) {
        snprintf(why, len, "xenstore: write the transport keys in %s: %s", x->fe, strerror(errno));
        goto fail;
    }
    return 0;
fail:;
    int e = errno;
    nf_link_free(l);
    errno = e;
    return -1;
}

void nf_link_free(struct nf_link *l)
{
    while (nf_link_release_step(l))
        ;
}

void nf_link_retire(struct nf_link *l)
{
    for (unsigned k = 0; k < NF_MAX_QUEUES; k++)
        nf_conn_unbind(l->q[k]);
}

bool nf_link_release_step(struct nf_link *l)
{
    for (unsigned k = 0; k < NF_MAX_QUEUES; k++) {
        if (!l->q[k])
            continue;
        if (!nf_conn_release_step(l->q[k])) {
            free(l->q[k]);
            l->q[k] = NULL;
        }
        return true;
    }
    l->nq = 0;
    return false;
}

void nf_link_take(struct nf_link *to, struct nf_link *from)
{
    nf_link_free(to);
    *to = *from;
    memset(from, 0, sizeof(*from));
}

unsigned nf_link_grants(const struct nf_link *l)
{
    return l->nq * NF_QUEUE_GRANTS;
}
