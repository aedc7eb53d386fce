/* net-announce-test - the RARP announcement a promoted standby sends
 * (nf_announce.c): byte for byte as QEMU's self-announcement forms it
 * (RFC 903: Ethernet type 0x8035, a "request reverse" for our own
 * address), so that every bridge learns our MAC from its source and no
 * host takes an address from it. Pure C, no Xen. Exit 0 if every check
 * holds. */
#include "nf_announce.h"

#include <string.h>

#include "check.h"

int main(void)
{
    const uint8_t mac[6] = {0x00, 0x16, 0x3e, 0x4e, 0x46, 0x01};
    uint8_t f[NF_ANNOUNCE_LEN];
    memset(f, 0xaa, sizeof(f)); /* the padding must be written, not left */
    nf_announce_frame(mac, f);
    const uint8_t want[42] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* to everyone */
        0x00, 0x16, 0x3e, 0x4e, 0x46, 0x01, /* from us: what bridges learn */
        0x80, 0x35,                         /* RARP */
        0x00, 0x01, 0x08, 0x00, 6,    4,    /* Ethernet, IPv4, lengths */
        0x00, 0x03,                         /* request reverse */
        0x00, 0x16, 0x3e, 0x4e, 0x46, 0x01, /* sender hardware address */
        0,    0,    0,    0,                /* sender protocol address: none */
        0x00, 0x16, 0x3e, 0x4e, 0x46, 0x01, /* target hardware address: us */
        0,    0,    0,    0,                /* target protocol address: asked */
    };
    CHECK(NF_ANNOUNCE_LEN == 60);
    CHECK(!memcmp(f, want, sizeof(want)));
    for (unsigned i = sizeof(want); i < NF_ANNOUNCE_LEN; i++)
        CHECK_EQ(f[i], 0);
    return check_done("net-announce-test");
}
