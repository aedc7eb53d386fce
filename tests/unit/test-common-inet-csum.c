/* test-common-inet-csum.c - T0 tests of the Internet checksum routines
 * (common/inet_csum.c) against checksums computed elsewhere: RFC 1071's
 * worked example, the well-known IPv4 header example, and UDP/TCP frames the
 * Linux kernel checksummed in software (read from a TUN device without
 * offloads), so that the routines are not only checked against themselves. */
#define _GNU_SOURCE
#include "check.h"
#include "inet_csum.h"

#include <errno.h>
#include <string.h>

static size_t unhex(const char *s, uint8_t *out)
{
    size_t n = 0;
    for (; s[0] && s[1]; s += 2) {
        unsigned v;
        sscanf(s, "%2x", &v);
        out[n++] = (uint8_t)v;
    }
    return n;
}

static unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

/* Kernel-made IPv4 packets (no Ethernet header): UDP 10.9.0.1:1234 ->
 * 10.9.0.2:5678 "understudy"; a TCP SYN 10.9.0.1:40000 -> 10.9.0.2:80. */
static const char UDP4[] = "45000026fe1f4000401128930a0900010a09000204d2162e0012ab7f756e6465727374"
                           "756479";
static const char TCP4[] = "4500003c287440004006fe330a0900010a0900029c400050ba7d811d00000000a002fa"
                           "f0c4cc0000020405b40402080a3c7c5f83000000000103030a";
/* UDP over IPv6 fd00::1:1234 -> fd00::2:5678 "understudy6!". */
static const char UDP6[] = "600c34d900141140fd000000000000000000000000000001fd00000000000000000000"
                           "000000000204d2162e00148f6a756e64657273747564793621";

static void test_rfc1071(void)
{
    /* RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
    static const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    CHECK_EQ(inet_csum_fold(inet_csum_add(0, b, sizeof(b))), 0xddf2);
    CHECK_EQ(inet_csum_finish(inet_csum_add(0, b, sizeof(b))), 0x220d);
    /* In two even chunks, the same. */
    CHECK_EQ(inet_csum_fold(inet_csum_add(inet_csum_add(0, b, 4), b + 4, 4)), 0xddf2);
    /* An odd byte is the high half of a word. */
    static const uint8_t odd[] = {0x12, 0x34, 0x56};
    CHECK_EQ(inet_csum_fold(inet_csum_add(0, odd, 3)), 0x1234 + 0x5600);
    /* Carries wrap around, however many. */
    static uint8_t ff[70000];
    memset(ff, 0xff, sizeof(ff));
    CHECK_EQ(inet_csum_fold(inet_csum_add(0xffffffffu, ff, sizeof(ff))), 0xffff);
    CHECK_EQ(inet_csum_fold(0x1fffe), 0xffff);
    CHECK_EQ(inet_csum_add(7, b, 0), 7);
}

static void test_ipv4_header(void)
{
    uint8_t ip[20];
    unhex("450000730000400040110000c0a80001c0a800c7", ip);
    CHECK_EQ(inet_csum_finish(inet_csum_add(0, ip, 20)), 0xb861);
    ip[10] = 0xb8, ip[11] = 0x61;
    CHECK_EQ(inet_csum_finish(inet_csum_add(0, ip, 20)), 0); /* a correct header */
    uint8_t k[64];
    unhex(UDP4, k);
    CHECK_EQ(inet_csum_finish(inet_csum_add(0, k, 20)), 0);
}

/* The kernel's L4 checksum of packet hex (IP header ihl, L4 at l4, field at
 * l4 + off) is reproduced from the pseudo-header and the segment. */
static void check_l4(const char *hex, unsigned ver, unsigned proto, size_t l4, size_t off)
{
    uint8_t k[128];
    size_t n = unhex(hex, k);
    unsigned want = get16(k + l4 + off);
    uint32_t l4len = (uint32_t)(n - l4);
    uint32_t ps = ver == 4 ? inet_csum_pseudo4(k + 12, k + 16, proto, l4len)
                           : inet_csum_pseudo6(k + 8, k + 24, proto, l4len);
    /* The whole segment, its checksum included, verifies. */
    CHECK_EQ(inet_csum_finish(inet_csum_add(ps, k + l4, l4len)), 0);
    /* Left partial (the pseudo-header sum in the field), then completed. */
    k[l4 + off] = (uint8_t)(inet_csum_fold(ps) >> 8);
    k[l4 + off + 1] = (uint8_t)inet_csum_fold(ps);
    CHECK_EQ(inet_csum_complete(k, n, l4, off), 0);
    CHECK_EQ(get16(k + l4 + off), want);
}

static void test_kernel_frames(void)
{
    check_l4(UDP4, 4, 17, 20, 6);
    check_l4(TCP4, 4, 6, 20, 16);
    check_l4(UDP6, 6, 17, 40, 6);
}

/* Odd lengths: the last byte is padded, as a slow word-by-word sum does it. */
static void test_complete_odd(void)
{
    static uint8_t f[200];
    for (size_t len = 43; len < sizeof(f); len += 26) {
        for (size_t i = 0; i < len; i++)
            f[i] = (uint8_t)(i * 37 + len);
        f[40] = 0x12, f[41] = 0x34; /* a "pseudo-header sum" in the field */
        uint32_t s = 0;
        for (size_t i = 34; i < len; i += 2)
            s += (uint32_t)f[i] << 8 | (i + 1 < len ? f[i + 1] : 0u);
        while (s >> 16)
            s = (s & 0xffff) + (s >> 16);
        unsigned want = (uint16_t)~s ? (uint16_t)~s : 0xffff;
        CHECK_EQ(inet_csum_complete(f, len, 34, 6), 0);
        CHECK_EQ(get16(f + 40), want);
    }
}

static void test_complete_bounds(void)
{
    uint8_t f[64] = {0};
    CHECK_EQ(inet_csum_complete(f, sizeof(f), 34, 6), 0);
    CHECK_EQ(get16(f + 40), 0xffff); /* a zero sum: 0 is stored as 0xffff */
    errno = 0;
    CHECK_EQ(inet_csum_complete(f, sizeof(f), 63, 0), -1); /* field past the end */
    CHECK_EQ(errno, ERANGE);
    CHECK_EQ(inet_csum_complete(f, sizeof(f), 65, 0), -1);
    CHECK_EQ(inet_csum_complete(f, sizeof(f), 34, 0xfffff), -1);
    CHECK_EQ(inet_csum_complete(f, sizeof(f), 62, 0), 0); /* the last two bytes */
}

int main(void)
{
    test_rfc1071();
    test_ipv4_header();
    test_kernel_frames();
    test_complete_odd();
    test_complete_bounds();
    return check_done("test-common-inet-csum");
}
