/* nb_mcast_test - the multicast filter list (nb_mcast.c). */
#define _GNU_SOURCE
#include "check.h"
#include "nb_mcast.h"

#include <errno.h>
#include <string.h>

int main(void)
{
    struct nb_mcast m;
    memset(&m, 0, sizeof(m));
    uint8_t g[6] = {0x01, 0x00, 0x5e, 1, 2, 3}, u[6] = {0x00, 0x16, 0x3e, 1, 2, 3};
    uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK(nb_mcast_allows(&m, false, g)); /* no filtering */
    CHECK(!nb_mcast_allows(&m, true, g));
    CHECK(nb_mcast_allows(&m, true, u));
    CHECK(nb_mcast_allows(&m, true, bc));
    CHECK_EQ(nb_mcast_add(&m, g), 0);
    CHECK_EQ(nb_mcast_add(&m, g), 0); /* twice is once */
    CHECK_EQ(m.n, 1);
    CHECK(nb_mcast_allows(&m, true, g));
    errno = 0;
    CHECK_EQ(nb_mcast_add(&m, u), -1);
    CHECK_EQ(errno, EINVAL);
    nb_mcast_del(&m, u); /* absent: fine */
    nb_mcast_del(&m, g);
    CHECK(!nb_mcast_allows(&m, true, g));
    for (unsigned i = 0; i < NB_MCAST_MAX; i++) {
        uint8_t a[6] = {0x01, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i};
        CHECK_EQ(nb_mcast_add(&m, a), 0);
    }
    errno = 0;
    CHECK_EQ(nb_mcast_add(&m, g), -1);
    CHECK_EQ(errno, ENOSPC);
    uint8_t a5[6] = {0x01, 0, 0, 0, 0, 5};
    nb_mcast_del(&m, a5);
    CHECK_EQ(m.n, NB_MCAST_MAX - 1);
    CHECK(!nb_mcast_allows(&m, true, a5));
    uint8_t last[6] = {0x01, 0, 0, 0, 0, NB_MCAST_MAX - 1};
    CHECK(nb_mcast_allows(&m, true, last)); /* moved into the hole, still found */
    nb_mcast_clear(&m);
    CHECK_EQ(m.n, 0);
    return check_done("nb_mcast_test");
}
