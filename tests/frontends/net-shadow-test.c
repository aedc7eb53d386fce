/* net-shadow-test - unit tests of the netfront's shadow (nf_shadow.c): the
 * /proc/net/dev_mcast parser, the receive filter and when the backend is
 * asked to filter multicast. Pure C, no Xen. Exit 0 if every check holds. */
#define _GNU_SOURCE
#include "nf_shadow.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static const uint8_t mac[6] = {0x00, 0x16, 0x3e, 0x4e, 0x46, 0x01};

static void test_parse(void)
{
    struct nf_shadow s = {0};
    const char *text = "1    lo              1     0     01005e000001\n"
                       "2    eth0            1     0     333300000001\n"
                       "2    eth0            1     0     01005e000001\n"
                       "2    eth0            2     0     01005e010203\n"
                       "3    eth00           1     0     01005e0a0a0a\n"
                       "2    eth0            1     0     01005e010203\n";
    CHECK(nf_shadow_parse_mcast(text, "eth0", &s) == 4);
    CHECK(s.nmc == 3); /* the repeated address counts once */
    const uint8_t g[6] = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
    const uint8_t other[6] = {0x01, 0x00, 0x5e, 0x0a, 0x0a, 0x0a};
    CHECK(nf_shadow_has(&s, g));
    CHECK(!nf_shadow_has(&s, other)); /* eth00's, not ours */
    CHECK(!s.mc_overflow);
    /* A malformed line for our interface is an error; for another, ignored. */
    CHECK(nf_shadow_parse_mcast("2 eth0 1 0 01005e01zz03\n", "eth0", &s) < 0);
    CHECK(nf_shadow_parse_mcast("2 eth1 1 0 01005e01zz03\n", "eth0", &s) == 0);
    CHECK(nf_shadow_parse_mcast("garbage\n\n", "eth0", &s) == 0);
    CHECK(nf_shadow_parse_mcast("", "eth0", &s) == 0 && s.nmc == 0);
    /* A non-Ethernet address length is skipped, not an error. */
    CHECK(nf_shadow_parse_mcast("2 eth0 1 0 0100\n", "eth0", &s) == 1 && s.nmc == 0);
    /* More than NF_MCAST_MAX addresses: overflowed. */
    char big[8192] = "";
    for (unsigned i = 0; i < NF_MCAST_MAX + 2; i++) {
        char l[64];
        snprintf(l, sizeof(l), "2 eth0 1 0 01005e0100%02x\n", i);
        strcat(big, l);
    }
    CHECK(nf_shadow_parse_mcast(big, "eth0", &s) == (int)NF_MCAST_MAX + 2);
    CHECK(s.nmc == NF_MCAST_MAX && s.mc_overflow);
    CHECK(!nf_shadow_wants_filter(&s));
}

static void test_filter(void)
{
    struct nf_shadow s = {.mtu = 1500, .up = true, .nmc = 1};
    memcpy(s.mc[0], "\x01\x00\x5e\x01\x02\x03", 6);
    const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    const uint8_t host[6] = {0x02, 0, 0, 0, 0, 0x99};
    const uint8_t joined[6] = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
    const uint8_t unjoined[6] = {0x01, 0x00, 0x5e, 0x09, 0x09, 0x09};
    CHECK(nf_shadow_accepts(&s, mac, mac));
    CHECK(nf_shadow_accepts(&s, mac, bcast));
    CHECK(nf_shadow_accepts(&s, mac, joined));
    CHECK(!nf_shadow_accepts(&s, mac, unjoined));
    CHECK(!nf_shadow_accepts(&s, mac, host));
    CHECK(nf_shadow_wants_filter(&s));
    s.allmulti = true;
    CHECK(nf_shadow_accepts(&s, mac, unjoined));
    CHECK(!nf_shadow_accepts(&s, mac, host));
    CHECK(!nf_shadow_wants_filter(&s));
    s.allmulti = false;
    s.promisc = true;
    CHECK(nf_shadow_accepts(&s, mac, host));
    CHECK(nf_shadow_accepts(&s, mac, unjoined));
    CHECK(!nf_shadow_wants_filter(&s));
    char d[96];
    nf_shadow_describe(&s, d, sizeof(d));
    CHECK(!strcmp(d, "mtu=1500 up promisc mc=1"));
}

int main(void)
{
    test_parse();
    test_filter();
    return check_done("net-shadow-test");
}
