/* nbad.c - malformed netif tx requests. Each kind breaks one rule. */
#define _GNU_SOURCE
#include "nbad.h"

#include <stdio.h>
#include <string.h>

const char *const nbad_kinds[] = {
    "slots-19",      "size-small",    "cross-page",   "cross-page-frag",
    "first-offset",  "frag-offset",   "frags-bigger", "bad-gref",
    "bad-gref-frag", "extra-unknown", "extra-none",   "extra-dup",
    "gso-type",      "gso-size0",     "gso-mismatch", "gso-not-tcp",
    "csum-not-ip",   "mcast-unicast", NULL,
};

#define BOGUS_GREF 0x7ffff0u
#define MAX_REQS   32u

struct build {
    netif_tx_request_t r[MAX_REQS];
    unsigned n, ndata, nextra;
};

static void extra(struct build *b, uint8_t type)
{
    netif_extra_info_t x;
    memset(&x, 0, sizeof(x));
    x.type = type;
    if (type == XEN_NETIF_EXTRA_TYPE_GSO) {
        x.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
        x.u.gso.size = 1400;
    }
    if (b->nextra) { /* chain from the previous one */
        netif_extra_info_t prev;
        memcpy(&prev, &b->r[b->n - 1], sizeof(prev));
        prev.flags |= XEN_NETIF_EXTRA_FLAG_MORE;
        memcpy(&b->r[b->n - 1], &prev, sizeof(prev));
    } else {
        b->r[0].flags |= NETTXF_extra_info;
    }
    memset(&b->r[b->n], 0, sizeof(b->r[b->n]));
    memcpy(&b->r[b->n], &x, sizeof(x));
    b->n++;
    b->nextra++;
}

/* Change slot i's extra-info through a copy (the slot is a tx request). */
static netif_extra_info_t get_extra(const struct build *b, unsigned i)
{
    netif_extra_info_t x;
    memcpy(&x, &b->r[i], sizeof(x));
    return x;
}

static void put_extra(struct build *b, unsigned i, const netif_extra_info_t *x)
{
    memcpy(&b->r[i], x, sizeof(*x));
}

/* Data slots: frame split into nslots pieces, each in its own tx page. */
static void data(struct nf *t, struct build *b, const uint8_t *f, unsigned len, unsigned nslots,
                 unsigned first_page)
{
    unsigned pos = 0, per = len / nslots;
    for (unsigned k = 0; k < nslots; k++) {
        unsigned n = k + 1 == nslots ? len - pos : per, pg = first_page + k;
        memcpy(nf_txpage(t, 0, pg), f + pos, n);
        netif_tx_request_t *r = &b->r[b->n++];
        memset(r, 0, sizeof(*r));
        r->gref = t->q[0].txrefs[pg];
        r->id = (uint16_t)pg;
        r->size = (uint16_t)(k == 0 ? len : n);
        r->flags = k + 1 < nslots ? NETTXF_more_data : 0;
        pos += n;
        b->ndata++;
    }
}

int nbad_send(struct nf *t, const char *kind, const struct nfr_end *src, const struct nfr_end *dst)
{
    uint8_t f[2048];
    size_t len = nfr_udp(f, sizeof(f), src, dst, 7, 600, false);
    struct build b;
    memset(&b, 0, sizeof(b));
    if (nf_tx_drain(t, t->o.timeout_ms) < 0)
        return -1;
    /* The first data slot goes first; extras follow it; then the other data slots. */
    if (!strcmp(kind, "slots-19")) {
        data(t, &b, f, (unsigned)len, 19, 0);
    } else if (!strcmp(kind, "size-small")) {
        data(t, &b, f, 10, 1, 0);
    } else if (!strcmp(kind, "cross-page")) {
        data(t, &b, f, (unsigned)len, 1, 0);
        b.r[0].offset = 4000;
    } else if (!strcmp(kind, "cross-page-frag")) {
        data(t, &b, f, (unsigned)len, 2, 0);
        b.r[1].offset = 3900;
    } else if (!strcmp(kind, "first-offset")) {
        data(t, &b, f, (unsigned)len, 1, 0);
        b.r[0].offset = 65000; /* far past the page */
    } else if (!strcmp(kind, "frag-offset")) {
        data(t, &b, f, (unsigned)len, 3, 0);
        b.r[2].offset = 4096; /* starts at the page's end */
    } else if (!strcmp(kind, "frags-bigger")) {
        data(t, &b, f, (unsigned)len, 2, 0);
        b.r[0].size = 100;
    } else if (!strcmp(kind, "bad-gref")) {
        data(t, &b, f, (unsigned)len, 1, 0);
        b.r[0].gref = BOGUS_GREF;
    } else if (!strcmp(kind, "bad-gref-frag")) {
        data(t, &b, f, (unsigned)len, 3, 0);
        b.r[1].gref = BOGUS_GREF;
    } else if (!strcmp(kind, "extra-unknown") || !strcmp(kind, "extra-none") ||
               !strcmp(kind, "extra-dup") || !strcmp(kind, "gso-type") ||
               !strcmp(kind, "gso-size0")) {
        data(t, &b, f, (unsigned)len, 1, 0);
        extra(&b, XEN_NETIF_EXTRA_TYPE_GSO);
        netif_extra_info_t x = get_extra(&b, 1);
        if (!strcmp(kind, "extra-unknown"))
            x.type = 7;
        else if (!strcmp(kind, "extra-none"))
            x.type = XEN_NETIF_EXTRA_TYPE_NONE;
        else if (!strcmp(kind, "gso-type"))
            x.u.gso.type = 9;
        else if (!strcmp(kind, "gso-size0"))
            x.u.gso.size = 0;
        put_extra(&b, 1, &x);
        if (!strcmp(kind, "extra-dup"))
            extra(&b, XEN_NETIF_EXTRA_TYPE_GSO);
    } else if (!strcmp(kind, "gso-mismatch") || !strcmp(kind, "gso-not-tcp")) {
        if (!strcmp(kind, "gso-mismatch"))
            len = nfr_tcp(f, sizeof(f), src, dst, 1000, 600);
        data(t, &b, f, (unsigned)len, 1, 0);
        b.r[0].flags |= NETTXF_csum_blank;
        extra(&b, XEN_NETIF_EXTRA_TYPE_GSO);
        if (!strcmp(kind, "gso-mismatch")) {
            netif_extra_info_t x = get_extra(&b, 1);
            x.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV6;
            put_extra(&b, 1, &x);
        }
    } else if (!strcmp(kind, "csum-not-ip")) {
        f[12] = 0x08;
        f[13] = 0x06; /* ARP */
        data(t, &b, f, (unsigned)len, 1, 0);
        b.r[0].flags |= NETTXF_csum_blank;
    } else if (!strcmp(kind, "mcast-unicast")) {
        data(t, &b, f, 0 + 14, 1, 0);
        extra(&b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD);
        netif_extra_info_t x = get_extra(&b, 1);
        memcpy(x.u.mcast.addr, src->mac, 6);
        put_extra(&b, 1, &x);
    } else {
        return -2;
    }
    /* Extras were appended after all data slots: move them behind the first. */
    if (b.nextra && b.ndata > 1) {
        netif_tx_request_t tmp[MAX_REQS];
        memcpy(tmp, b.r, sizeof(tmp));
        unsigned e0 = b.ndata;
        memcpy(&b.r[1], &tmp[e0], b.nextra * sizeof(tmp[0]));
        memcpy(&b.r[1 + b.nextra], &tmp[1], (b.ndata - 1) * sizeof(tmp[0]));
    }
    nf_push_raw(t, 0, b.r, b.n);
    netif_tx_response_t rsp[MAX_REQS];
    if (nf_collect(t, 0, b.n, t->o.timeout_ms, rsp) < 0)
        return -1;
    unsigned err = 0, null = 0;
    for (unsigned i = 0; i < b.n; i++) {
        if (rsp[i].status == NETIF_RSP_NULL) {
            null++;
            continue;
        }
        /* Data slot k used tx page k, and its id is k. */
        if (rsp[i].status == NETIF_RSP_ERROR && rsp[i].id < b.ndata)
            err++;
    }
    if (err != b.ndata || null != b.nextra) {
        snprintf(t->err, sizeof(t->err),
                 "%s: %u data slots, %u extras: got %u ERROR answers with our ids and %u NULL",
                 kind, b.ndata, b.nextra, err, null);
        return -1;
    }
    return 0;
}
