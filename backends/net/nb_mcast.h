/* nb_mcast.h - the frontend's multicast filter list
 * (feature-multicast-control; XEN_NETIF_EXTRA_TYPE_MCAST_ADD/DEL). Pure.
 */
#ifndef NB_MCAST_H
#define NB_MCAST_H

#include <stdbool.h>
#include <stdint.h>

/* Addresses the list holds at most (Linux netback's bound too). */
#define NB_MCAST_MAX 64u

struct nb_mcast {
    unsigned n;
    uint8_t addr[NB_MCAST_MAX][6];
};

/* Add a multicast address; present already is fine. 0, or -1 with errno
 * EINVAL (not a multicast address) or ENOSPC (list full). */
int nb_mcast_add(struct nb_mcast *m, const uint8_t a[6]);
/* Remove it; absent is fine. */
void nb_mcast_del(struct nb_mcast *m, const uint8_t a[6]);
void nb_mcast_clear(struct nb_mcast *m);
/* May a frame to dst reach the frontend? Unicast and broadcast always;
 * other multicast only if listed, when filtering is on. */
bool nb_mcast_allows(const struct nb_mcast *m, bool filtering, const uint8_t dst[6]);

#endif
