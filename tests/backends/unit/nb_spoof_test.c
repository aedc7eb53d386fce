/* nb_spoof_test - the anti-spoofing filter (nb_spoof.c): the vif's own MAC
 * and, with an "ip" list, its own IPv4 and ARP sender addresses pass; every
 * other source is refused; VLAN-tagged frames are looked through; the "ip"
 * key's value is parsed strictly. */
#define _GNU_SOURCE
#include "nb_spoof.h"
#include "check.h"

#include <string.h>

static const uint8_t MAC[6] = {0x00, 0x16, 0x3e, 0x12, 0x34, 0x56};
static const uint8_t OTHER[6] = {0x00, 0x16, 0x3e, 0xde, 0xad, 0x01};

/* An Ethernet frame from src of the given type, with a VLAN tag if vlan. */
static size_t eth(uint8_t *f, const uint8_t *src, unsigned type, int vlan)
{
    memset(f, 0, 128);
    memset(f, 0xff, 6);
    memcpy(f + 6, src, 6);
    size_t o = 12;
    if (vlan) {
        f[o] = 0x81, f[o + 1] = 0x00, f[o + 3] = 7;
        o += 4;
    }
    f[o] = (uint8_t)(type >> 8), f[o + 1] = (uint8_t)type;
    return o + 2;
}

static size_t ipv4(uint8_t *f, const uint8_t *src, const uint8_t ip[4], int vlan)
{
    size_t o = eth(f, src, 0x0800, vlan);
    f[o] = 0x45;
    memcpy(f + o + 12, ip, 4);
    return o + 20;
}

static size_t arp(uint8_t *f, const uint8_t *src, const uint8_t *sha, const uint8_t ip[4])
{
    size_t o = eth(f, src, 0x0806, 0);
    memcpy(f + o + 8, sha, 6);
    memcpy(f + o + 14, ip, 4);
    return o + 28;
}

int main(void)
{
    struct nb_spoof s = {0};
    memcpy(s.mac, MAC, 6);
    const char *why = NULL;
    uint8_t f[128];
    const uint8_t mine[4] = {10, 0, 0, 2}, theirs[4] = {10, 0, 0, 9};

    /* No ip key: only the MAC counts. */
    CHECK(nb_spoof_check(&s, f, ipv4(f, MAC, theirs, 0)) == NULL);
    CHECK(nb_spoof_check(&s, f, ipv4(f, OTHER, mine, 0)) != NULL);
    CHECK(nb_spoof_check(&s, f, ipv4(f, OTHER, mine, 1)) != NULL);
    CHECK(nb_spoof_check(&s, f, 10) != NULL);

    /* With addresses. */
    CHECK_EQ(nb_spoof_parse_ips("10.0.0.2 10.0.0.3", &s, &why), 0);
    CHECK_EQ(s.nip, 2);
    CHECK(nb_spoof_check(&s, f, ipv4(f, MAC, mine, 0)) == NULL);
    CHECK(nb_spoof_check(&s, f, ipv4(f, MAC, mine, 1)) == NULL);
    CHECK(nb_spoof_check(&s, f, ipv4(f, MAC, theirs, 0)) != NULL);
    CHECK(nb_spoof_check(&s, f, ipv4(f, MAC, theirs, 1)) != NULL);
    CHECK(nb_spoof_check(&s, f, ipv4(f, MAC, mine, 0) - 4) != NULL); /* header cut short */
    CHECK(nb_spoof_check(&s, f, arp(f, MAC, MAC, mine)) == NULL);
    CHECK(nb_spoof_check(&s, f, arp(f, MAC, OTHER, mine)) != NULL);
    CHECK(nb_spoof_check(&s, f, arp(f, MAC, MAC, theirs)) != NULL);
    /* IPv6 and others: by MAC only. */
    CHECK(nb_spoof_check(&s, f, eth(f, MAC, 0x86dd, 0) + 40) == NULL);

    /* The key, strictly. */
    const char *bad[] = {"10.0.0",
                         "10.0.0.256",
                         "x",
                         "10.0.0.1,10.0.0.2",
                         "::1",
                         "1.1.1.1 1.1.1.2 1.1.1.3 1.1.1.4 1.1.1.5 1.1.1.6 1.1.1.7 1.1.1.8 1.1.1.9 "
                         "1.1.1.10 1.1.1.11 1.1.1.12 1.1.1.13 1.1.1.14 1.1.1.15 1.1.1.16 1.1.1.17"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ(nb_spoof_parse_ips(bad[i], &s, &why), -1);
    CHECK_EQ(nb_spoof_parse_ips("", &s, &why), 0);
    CHECK_EQ(s.nip, 0);
    return check_done("nb_spoof_test");
}
