/* nf_announce.h - the frame the NIC sends when its path to the network
 * moved without its old path going away: a hot standby promoted while the
 * failed domain is only paused, its port still on its bridge and every
 * switch's forwarding entry for our MAC pointing there (until the guest
 * sends, or the entry ages out: 300 s by default). It is a RARP request
 * from our MAC to broadcast, as QEMU announces a guest after a migration:
 * bridges and switches learn the MAC's new port from it; hosts take no
 * address from it and change no ARP cache. */
#ifndef NF_ANNOUNCE_H
#define NF_ANNOUNCE_H

#include <stdint.h>

#define NF_ANNOUNCE_LEN 60u /* the minimum Ethernet frame, without its FCS */

/* The announcement of mac, padded with zeros. */
void nf_announce_frame(const uint8_t mac[6], uint8_t frame[NF_ANNOUNCE_LEN]);

#endif
