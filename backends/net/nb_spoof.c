/* nb_spoof.c - the guest's frames keep to its own addresses (see nb_spoof.h). */
#define _GNU_SOURCE
#include "nb_spoof.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#define ETH_HLEN       14u
#define ETHERTYPE_IP   0x0800u
#define ETHERTYPE_ARP  0x0806u
#define ETHERTYPE_VLAN 0x8100u

int nb_spoof_parse_ips(const char *v, struct nb_spoof *s, const char **why)
{
    s->nip = 0;
    char one[INET_ADDRSTRLEN];
    for (const char *p = v; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        size_t n = strcspn(p, " ");
        if (n >= sizeof(one)) {
            *why = "an address is not a dotted IPv4 address";
            return -1;
        }
        memcpy(one, p, n);
        one[n] = 0;
        struct in_addr a;
        if (inet_pton(AF_INET, one, &a) != 1) {
            *why = "an address is not a dotted IPv4 address";
            return -1;
        }
        if (s->nip == NB_SPOOF_MAX_IPS) {
            *why = "more than 16 addresses";
            return -1;
        }
        s->ip[s->nip++] = a.s_addr;
        p += n;
    }
    return 0;
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static bool ip_ok(const struct nb_spoof *s, const uint8_t *p)
{
    if (!s->nip)
        return true;
    uint32_t a;
    memcpy(&a, p, 4);
    for (unsigned i = 0; i < s->nip; i++)
        if (s->ip[i] == a)
            return true;
    return false;
}

const char *nb_spoof_check(const struct nb_spoof *s, const uint8_t *f, size_t len)
{
    if (len < ETH_HLEN)
        return "a frame shorter than its Ethernet header";
    if (memcmp(f + 6, s->mac, 6))
        return "a source MAC that is not the vif's";
    size_t off = ETH_HLEN;
    uint16_t type = be16(f + 12);
    if (type == ETHERTYPE_VLAN) {
        if (len < off + 4)
            return "a VLAN tag cut short";
        type = be16(f + off + 2);
        off += 4;
    }
    if (type == ETHERTYPE_IP && s->nip) {
        if (len < off + 20)
            return "an IPv4 header cut short";
        if (!ip_ok(s, f + off + 12))
            return "an IPv4 source that is not one of the vif's addresses";
    } else if (type == ETHERTYPE_ARP) {
        /* Ethernet/IPv4 ARP: sender MAC at 8, sender IP at 14. */
        if (len < off + 28)
            return "an ARP packet cut short";
        if (memcmp(f + off + 8, s->mac, 6))
            return "an ARP sender MAC that is not the vif's";
        if (!ip_ok(s, f + off + 14))
            return "an ARP sender address that is not one of the vif's";
    }
    return NULL;
}
