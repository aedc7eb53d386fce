/* nb_txcheck_test - decoding and validation of guest-transmit packets
 * (nb_txcheck.c): slot chains, extra-info chains, every size/offset rule. */
#define _GNU_SOURCE
#include "check.h"
#include "nb_txcheck.h"

#include <string.h>

static netif_tx_request_t S[40];

static void data(unsigned i, uint16_t off, uint16_t size, uint16_t flags)
{
    memset(&S[i], 0, sizeof(S[i]));
    S[i].gref = 100 + i;
    S[i].id = (uint16_t)i;
    S[i].offset = off;
    S[i].size = size;
    S[i].flags = flags;
}

static void extra(unsigned i, uint8_t type, bool more)
{
    netif_extra_info_t x;
    memset(&x, 0, sizeof(x));
    x.type = type;
    x.flags = more ? XEN_NETIF_EXTRA_FLAG_MORE : 0;
    if (type == XEN_NETIF_EXTRA_TYPE_GSO) {
        x.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
        x.u.gso.size = 1448;
    }
    memset(&S[i], 0, sizeof(S[i]));
    memcpy(&S[i], &x, sizeof(x));
}

/* Change extra slot i's GSO fields (through a copy: the slot is a tx request). */
static void set_gso(unsigned i, uint8_t type, uint16_t size)
{
    netif_extra_info_t x;
    memcpy(&x, &S[i], sizeof(x));
    x.u.gso.type = type;
    x.u.gso.size = size;
    memcpy(&S[i], &x, sizeof(x));
}

static void test_single(void)
{
    struct nb_txpkt p;
    data(0, 0, 60, 0);
    CHECK_EQ(nb_tx_decode(S, 1, &p), 1);
    CHECK_EQ(p.status, NETIF_RSP_OKAY);
    CHECK_EQ(p.ndata, 1);
    CHECK_EQ(p.first_len, 60);
    data(0, 4096 - 60, 60, 0); /* ends exactly at the page end */
    CHECK_EQ(nb_tx_decode(S, 1, &p), 1);
    CHECK_EQ(p.status, NETIF_RSP_OKAY);
    data(0, 4096 - 59, 60, 0);
    nb_tx_decode(S, 1, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    data(0, 0, 13, 0); /* below an Ethernet header */
    nb_tx_decode(S, 1, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    CHECK(p.why != NULL);
    data(0, 65535, 14, 0); /* offset far past the page */
    nb_tx_decode(S, 1, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    CHECK_EQ(nb_tx_decode(S, 0, &p), 0);
}

static void test_multi(void)
{
    struct nb_txpkt p;
    data(0, 100, 3000, NETTXF_more_data);
    data(1, 0, 1000, NETTXF_more_data);
    data(2, 3000, 1000, 0);
    CHECK_EQ(nb_tx_decode(S, 3, &p), 3);
    CHECK_EQ(p.status, NETIF_RSP_OKAY);
    CHECK_EQ(p.ndata, 3);
    CHECK_EQ(p.first_len, 1000);
    CHECK_EQ(nb_tx_decode(S, 2, &p), 0); /* the rest not posted yet */
    data(2, 3097, 1000, 0);              /* a fragment crossing its page */
    nb_tx_decode(S, 3, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    data(0, 0, 1999, NETTXF_more_data); /* fragments hold more than the packet */
    data(2, 0, 1000, 0);
    nb_tx_decode(S, 3, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    data(0, 0, 2000, NETTXF_more_data); /* first slot 0 bytes: allowed */
    nb_tx_decode(S, 3, &p);
    CHECK_EQ(p.status, NETIF_RSP_OKAY);
    CHECK_EQ(p.first_len, 0);
    data(0, 4000, 2000 + 97, NETTXF_more_data); /* first slot's 97 bytes cross */
    nb_tx_decode(S, 3, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    /* 18 data slots pass, 19 do not, and all 19 are consumed either way. */
    for (unsigned n = 18; n <= 19; n++) {
        for (unsigned i = 0; i < n; i++)
            data(i, 0, i == 0 ? (uint16_t)(n * 100) : 100, i + 1 < n ? NETTXF_more_data : 0);
        CHECK_EQ(nb_tx_decode(S, n, &p), n);
        CHECK_EQ(p.status, n == 18 ? NETIF_RSP_OKAY : NETIF_RSP_ERROR);
    }
}

static void test_extras(void)
{
    struct nb_txpkt p;
    data(0, 0, 1500, NETTXF_extra_info | NETTXF_more_data | NETTXF_csum_blank);
    extra(1, XEN_NETIF_EXTRA_TYPE_GSO, false);
    data(2, 0, 500, 0);
    CHECK_EQ(nb_tx_decode(S, 3, &p), 3);
    CHECK_EQ(p.status, NETIF_RSP_OKAY);
    CHECK_EQ(p.data_off, 2);
    CHECK_EQ(p.ndata, 2);
    CHECK(p.extras & (1u << XEN_NETIF_EXTRA_TYPE_GSO));
    CHECK_EQ(nb_txpkt_slot(S, &p, 1)->id, 2);
    CHECK_EQ(nb_tx_decode(S, 1, &p), 0); /* extra not posted yet */
    /* two extras chained */
    extra(1, XEN_NETIF_EXTRA_TYPE_GSO, true);
    extra(2, XEN_NETIF_EXTRA_TYPE_HASH, false);
    data(3, 0, 500, 0);
    CHECK_EQ(nb_tx_decode(S, 4, &p), 4);
    CHECK_EQ(p.status, NETIF_RSP_OKAY);
    CHECK_EQ(p.data_off, 3);
    /* repeated, NONE and unknown types */
    extra(2, XEN_NETIF_EXTRA_TYPE_GSO, false);
    CHECK_EQ(nb_tx_decode(S, 4, &p), 4);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    extra(1, XEN_NETIF_EXTRA_TYPE_NONE, false);
    data(2, 0, 500, 0);
    CHECK_EQ(nb_tx_decode(S, 3, &p), 3);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    extra(1, XEN_NETIF_EXTRA_TYPE_MAX, false);
    nb_tx_decode(S, 3, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    /* GSO type and size */
    extra(1, XEN_NETIF_EXTRA_TYPE_GSO, false);
    set_gso(1, 3, 1448);
    nb_tx_decode(S, 3, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
    extra(1, XEN_NETIF_EXTRA_TYPE_GSO, false);
    set_gso(1, XEN_NETIF_GSO_TYPE_TCPV4, 0);
    nb_tx_decode(S, 3, &p);
    CHECK_EQ(p.status, NETIF_RSP_ERROR);
}

static void test_mcast(void)
{
    struct nb_txpkt p;
    data(0, 0, 0, NETTXF_extra_info); /* a dummy request: size 0 is fine */
    extra(1, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, false);
    CHECK_EQ(nb_tx_decode(S, 2, &p), 2);
    CHECK_EQ(p.status, NETIF_RSP_OKAY);
    CHECK(nb_txpkt_is_mcast(&p));
    extra(1, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, false);
    CHECK_EQ(nb_tx_decode(S, 2, &p), 2);
    CHECK(nb_txpkt_is_mcast(&p));
}

int main(void)
{
    test_single();
    test_multi();
    test_extras();
    test_mcast();
    return check_done("nb_txcheck_test");
}
