/* nf_announce.c - the RARP announcement of a NIC's MAC (see nf_announce.h). */
#include "nf_announce.h"

#include <string.h>

#define ETH_P_RARP_     0x8035u
#define ARPHRD_ETHER_   1u
#define ETH_P_IP_       0x0800u
#define RARP_OP_REQUEST 3u /* "request reverse" (RFC 903) */

static uint8_t *put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

void nf_announce_frame(const uint8_t mac[6], uint8_t frame[NF_ANNOUNCE_LEN])
{
    memset(frame, 0, NF_ANNOUNCE_LEN);
    uint8_t *p = frame;
    memset(p, 0xff, 6); /* to everyone */
    memcpy(p + 6, mac, 6);
    p = put16(p + 12, ETH_P_RARP_);
    p = put16(p, ARPHRD_ETHER_);
    p = put16(p, ETH_P_IP_);
    *p++ = 6; /* hardware address length */
    *p++ = 4; /* protocol address length */
    p = put16(p, RARP_OP_REQUEST);
    memcpy(p, mac, 6);      /* sender: us, no protocol address (zeros) */
    memcpy(p + 10, mac, 6); /* target: us, the address asked about */
}
