/* nb_txcheck.c - one guest-transmit packet: find its slots, then check
 * every rule that keeps it inside its pages and the protocol. */
#define _GNU_SOURCE
#include "nb_txcheck.h"

#include <string.h>

static void refuse(struct nb_txpkt *p, const char *why)
{
    if (p->status == NETIF_RSP_OKAY) {
        p->status = NETIF_RSP_ERROR;
        p->why = why;
    }
}

/* Walk the extra-info chain from slot *i; 0 if it runs past n. */
static int walk_extras(const netif_tx_request_t *slots, unsigned n, unsigned *i, struct nb_txpkt *p)
{
    for (;;) {
        if (*i >= n)
            return 0;
        netif_extra_info_t e;
        memcpy(&e, &slots[*i], sizeof(e));
        (*i)++;
        if (e.type == XEN_NETIF_EXTRA_TYPE_NONE || e.type >= XEN_NETIF_EXTRA_TYPE_MAX) {
            refuse(p, "unknown extra-info type");
        } else if (p->extras & (1u << e.type)) {
            refuse(p, "extra-info type repeated");
        } else {
            p->extras |= 1u << e.type;
            p->extra[e.type] = e;
        }
        if (!(e.flags & XEN_NETIF_EXTRA_FLAG_MORE))
            return 1;
    }
}

static void check_gso(struct nb_txpkt *p)
{
    if (!(p->extras & (1u << XEN_NETIF_EXTRA_TYPE_GSO)))
        return;
    const netif_extra_info_t *g = &p->extra[XEN_NETIF_EXTRA_TYPE_GSO];
    if (g->u.gso.type != XEN_NETIF_GSO_TYPE_TCPV4 && g->u.gso.type != XEN_NETIF_GSO_TYPE_TCPV6)
        refuse(p, "unknown GSO type");
    else if (g->u.gso.size == 0)
        refuse(p, "GSO segment size 0");
}

unsigned nb_tx_decode(const netif_tx_request_t *slots, unsigned n, struct nb_txpkt *p)
{
    memset(p, 0, sizeof(*p));
    p->status = NETIF_RSP_OKAY;
    if (n == 0)
        return 0;
    const netif_tx_request_t *first = &slots[0];
    p->total = first->size;
    p->flags = first->flags;
    unsigned i = 1;
    if ((first->flags & NETTXF_extra_info) && !walk_extras(slots, n, &i, p))
        return 0;
    p->data_off = i;
    p->ndata = 1;
    uint16_t last = first->flags;
    while (last & NETTXF_more_data) {
        if (i >= n)
            return 0;
        last = slots[i].flags;
        i++;
        p->ndata++;
    }
    p->nslots = i;

    /* A multicast list operation rides on a dummy request: its data is never read. */
    if (nb_txpkt_is_mcast(p))
        return i;
    if (p->ndata > NB_MAX_SLOTS)
        refuse(p, "more data slots than a packet may use");
    if (p->total < NB_MIN_PKT)
        refuse(p, "smaller than an Ethernet header");
    uint32_t rest = 0;
    for (unsigned k = 1; k < p->ndata && p->status == NETIF_RSP_OKAY; k++) {
        const netif_tx_request_t *s = nb_txpkt_slot(slots, p, k);
        if ((uint32_t)s->offset + s->size > NB_PAGE_SIZE)
            refuse(p, "a slot's offset + size crosses its page");
        rest += s->size;
    }
    if (p->status == NETIF_RSP_OKAY && rest > p->total)
        refuse(p, "slots hold more than the packet size");
    if (p->status == NETIF_RSP_OKAY) {
        p->first_len = (uint16_t)(p->total - rest);
        if ((uint32_t)first->offset + p->first_len > NB_PAGE_SIZE)
            refuse(p, "the first slot's offset + size crosses its page");
    }
    check_gso(p);
    return i;
}
