/* nb_corrupt.c - netback's corrupt hook for the core's fault layer
 * ("corrupt N", tx or rx): how one netif response is made invalid, in its
 * ring slot before it is published. An unknown id is ~id; an impossible
 * status is 0x7fff (no tx status, and more than a page for rx). Slots that
 * hold no response (tx NULL slots, rx extra-info) are passed over.
 */
#define _GNU_SOURCE
#include "nb.h"

#define NB_IMPOSSIBLE_STATUS 0x7fff

static void corrupt(struct be_dev *be, uint16_t *id, int16_t *status, enum be_corrupt how)
{
    if (how == BE_CORRUPT_ID)
        *id = (uint16_t) ~*id;
    else
        *status = NB_IMPOSSIBLE_STATUS;
    BE_LOG(be, "fault: corrupted response (id %#x status %d)", *id, *status);
}

bool nb_corrupt(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how)
{
    struct nb_dev *d = be_priv(be);
    for (unsigned i = 0; i < d->nq; i++) {
        struct nb_queue *q = &d->q[i];
        if (r == &q->txr) {
            /* Our own slot until it is published: a frontend that wrote
             * into it meanwhile only changes what it is told. */
            netif_tx_response_t *rsp = RING_GET_RESPONSE(&q->tx, idx);
            if (rsp->status == NETIF_RSP_NULL)
                return false;
            corrupt(be, &rsp->id, &rsp->status, how);
            return true;
        }
        if (r == &q->rxr) {
            if (q->rx_extra[idx % NB_RING_SIZE])
                return false;
            netif_rx_response_t *rsp = RING_GET_RESPONSE(&q->rx, idx);
            corrupt(be, &rsp->id, &rsp->status, how);
            return true;
        }
    }
    return false;
}
