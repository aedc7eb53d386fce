/* nb_mcast.c - the multicast filter list: a short array, O(n) lookups. */
#define _GNU_SOURCE
#include "nb_mcast.h"

#include <errno.h>
#include <string.h>

static int find(const struct nb_mcast *m, const uint8_t a[6])
{
    for (unsigned i = 0; i < m->n; i++)
        if (!memcmp(m->addr[i], a, 6))
            return (int)i;
    return -1;
}

int nb_mcast_add(struct nb_mcast *m, const uint8_t a[6])
{
    if (!(a[0] & 1)) {
        errno = EINVAL;
        return -1;
    }
    if (find(m, a) >= 0)
        return 0;
    if (m->n == NB_MCAST_MAX) {
        errno = ENOSPC;
        return -1;
    }
    memcpy(m->addr[m->n++], a, 6);
    return 0;
}

void nb_mcast_del(struct nb_mcast *m, const uint8_t a[6])
{
    int i = find(m, a);
    if (i < 0)
        return;
    m->n--;
    if ((unsigned)i != m->n)
        memcpy(m->addr[i], m->addr[m->n], 6);
}

void nb_mcast_clear(struct nb_mcast *m)
{
    m->n = 0;
}

bool nb_mcast_allows(const struct nb_mcast *m, bool filtering, const uint8_t dst[6])
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (!filtering || !(dst[0] & 1) || !memcmp(dst, bcast, 6))
        return true;
    return find(m, dst) >= 0;
}
