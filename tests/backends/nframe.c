/* nframe.c - hand-built frames for the network tests (see nframe.h). */
#define _GNU_SOURCE
#include "nframe.h"

#include "inet_csum.h"

#include <stdio.h>
#include <string.h>

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v & 0xffff);
}

static unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* The pseudo-header sum of an IPv4 packet's L4 segment. */
static uint32_t pseudo(const uint8_t *ip, unsigned proto, size_t l4len)
{
    return inet_csum_pseudo4(ip + 12, ip + 16, proto, (uint32_t)l4len);
}

uint8_t nfr_stream_byte(uint64_t off)
{
    return (uint8_t)(off * 131 + (off >> 8) * 7 + 3);
}

void nfr_payload(uint8_t *p, size_t len, uint32_t seq)
{
    put32(p, NFR_MAGIC);
    put32(p + 4, seq);
    for (size_t i = NFR_PAYMIN; i < len; i++)
        p[i] = (uint8_t)(seq * 31 + i * 7);
}

bool nfr_payload_ok(const uint8_t *p, size_t len, uint32_t *seq)
{
    if (len < NFR_PAYMIN || get32(p) != NFR_MAGIC)
        return false;
    *seq = get32(p + 4);
    for (size_t i = NFR_PAYMIN; i < len; i++)
        if (p[i] != (uint8_t)(*seq * 31 + i * 7))
            return false;
    return true;
}

static size_t ip_header(uint8_t *f, const struct nfr_end *src, const struct nfr_end *dst,
                        unsigned proto, size_t l4len)
{
    memcpy(f, dst->mac, 6);
    memcpy(f + 6, src->mac, 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + NFR_ETH;
    memset(ip, 0, NFR_IP);
    ip[0] = 0x45;
    put16(ip + 2, (unsigned)(NFR_IP + l4len));
    put16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = (uint8_t)proto;
    memcpy(ip + 12, src->ip, 4);
    memcpy(ip + 16, dst->ip, 4);
    put16(ip + 10, inet_csum_finish(inet_csum_add(0, ip, NFR_IP)));
    return NFR_ETH + NFR_IP;
}

size_t nfr_udp(uint8_t *f, size_t cap, const struct nfr_end *src, const struct nfr_end *dst,
               uint32_t seq, size_t paylen, bool partial)
{
    size_t l4 = NFR_UDP + paylen, n = NFR_ETH + NFR_IP + l4;
    if (n > cap || paylen < NFR_PAYMIN || l4 > 0xffff - NFR_IP)
        return 0;
    uint8_t *u = f + ip_header(f, src, dst, 17, l4);
    put16(u, src->port);
    put16(u + 2, dst->port);
    put16(u + 4, (unsigned)l4);
    put16(u + 6, 0);
    nfr_payload(u + NFR_UDP, paylen, seq);
    uint32_t ps = pseudo(f + NFR_ETH, 17, l4);
    if (partial) {
        put16(u + 6, inet_csum_fold(ps));
    } else {
        uint16_t c = inet_csum_finish(inet_csum_add(ps, u, l4));
        put16(u + 6, c ? c : 0xffff);
    }
    return n;
}

size_t nfr_udp6(uint8_t *f, size_t cap, const struct nfr_end *src, const struct nfr_end *dst,
                uint32_t seq, size_t paylen, bool partial)
{
    size_t l4 = NFR_UDP + paylen, n = NFR_ETH + NFR_IP6 + l4;
    if (n > cap || paylen < NFR_PAYMIN || l4 > 0xffff)
        return 0;
    memcpy(f, dst->mac, 6);
    memcpy(f + 6, src->mac, 6);
    put16(f + 12, 0x86dd);
    uint8_t *ip = f + NFR_ETH;
    memset(ip, 0, NFR_IP6);
    ip[0] = 0x60;
    put16(ip + 4, (unsigned)l4);
    ip[6] = 17;
    ip[7] = 64;
    memcpy(ip + 8, src->ip6, 16);
    memcpy(ip + 24, dst->ip6, 16);
    uint8_t *u = ip + NFR_IP6;
    put16(u, src->port);
    put16(u + 2, dst->port);
    put16(u + 4, (unsigned)l4);
    put16(u + 6, 0);
    nfr_payload(u + NFR_UDP, paylen, seq);
    uint32_t ps = inet_csum_pseudo6(ip + 8, ip + 24, 17, (uint32_t)l4);
    if (partial) {
        put16(u + 6, inet_csum_fold(ps));
    } else {
        uint16_t c = inet_csum_finish(inet_csum_add(ps, u, l4));
        put16(u + 6, c ? c : 0xffff);
    }
    return n;
}

size_t nfr_tcp(uint8_t *f, size_t cap, const struct nfr_end *src, const struct nfr_end *dst,
               uint32_t tcpseq, size_t paylen)
{
    size_t l4 = NFR_TCP + paylen, n = NFR_ETH + NFR_IP + l4;
    if (n > cap || l4 > 0xffff - NFR_IP)
        return 0;
    uint8_t *t = f + ip_header(f, src, dst, 6, l4);
    memset(t, 0, NFR_TCP);
    put16(t, src->port);
    put16(t + 2, dst->port);
    put32(t + 4, tcpseq);
    put32(t + 8, 1);
    t[12] = 5 << 4;
    t[13] = 0x18; /* ACK PSH */
    put16(t + 14, 65535);
    for (size_t i = 0; i < paylen; i++)
        t[NFR_TCP + i] = nfr_stream_byte(tcpseq + i);
    put16(t + 16, inet_csum_fold(pseudo(f + NFR_ETH, 6, l4)));
    return n;
}

/* IPv6 with UDP right after the fixed header (all our frames). */
static int parse6(const uint8_t *f, size_t len, struct nfr_info *in)
{
    if (len < NFR_ETH + NFR_IP6)
        return -1;
    const uint8_t *ip = f + NFR_ETH;
    size_t l4 = get16(ip + 4);
    if ((ip[0] >> 4) != 6 || NFR_ETH + NFR_IP6 + l4 > len)
        return -1;
    in->ipver = 6;
    in->ip_ok = true;
    in->proto = ip[6];
    const uint8_t *l = ip + NFR_IP6;
    if (ip[6] == 17 && l4 >= NFR_UDP) {
        uint32_t ps = inet_csum_pseudo6(ip + 8, ip + 24, 17, (uint32_t)l4);
        in->sport = (uint16_t)get16(l);
        in->dport = (uint16_t)get16(l + 2);
        in->payload = l + NFR_UDP;
        in->paylen = l4 - NFR_UDP;
        in->l4_csum_ok =
            inet_csum_fold(inet_csum_add(ps, l, l4)) == 0xffff; /* 0 is not allowed over IPv6 */
    } else {
        in->proto = 0;
    }
    return 0;
}

int nfr_parse(const uint8_t *f, size_t len, struct nfr_info *in)
{
    memset(in, 0, sizeof(*in));
    if (len >= NFR_ETH && get16(f + 12) == 0x86dd)
        return parse6(f, len, in);
    if (len < NFR_ETH + NFR_IP || get16(f + 12) != 0x0800)
        return -1;
    in->ipver = 4;
    const uint8_t *ip = f + NFR_ETH;
    unsigned ihl = (ip[0] & 15u) * 4u, tot = get16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < NFR_IP || tot < ihl || NFR_ETH + tot > len)
        return -1;
    in->ip_ok = inet_csum_fold(inet_csum_add(0, ip, ihl)) == 0xffff;
    const uint8_t *l = ip + ihl;
    size_t l4 = tot - ihl;
    in->proto = ip[9];
    uint32_t ps = pseudo(ip, ip[9], l4);
    if (ip[9] == 17 && l4 >= NFR_UDP) {
        in->sport = (uint16_t)get16(l);
        in->dport = (uint16_t)get16(l + 2);
        in->payload = l + NFR_UDP;
        in->paylen = l4 - NFR_UDP;
        in->l4_csum_ok = get16(l + 6) == 0 || inet_csum_fold(inet_csum_add(ps, l, l4)) == 0xffff;
    } else if (ip[9] == 6 && l4 >= NFR_TCP && (l[12] >> 4) * 4u <= l4) {
        unsigned doff = (l[12] >> 4) * 4u;
        in->sport = (uint16_t)get16(l);
        in->dport = (uint16_t)get16(l + 2);
        in->tcpseq = get32(l + 4);
        in->payload = l + doff;
        in->paylen = l4 - doff;
        in->l4_csum_ok = inet_csum_fold(inet_csum_add(ps, l, l4)) == 0xffff;
    } else {
        in->proto = 0;
    }
    return 0;
}

int nfr_parse_mac(const char *s, uint8_t mac[6])
{
    unsigned v[6];
    char tail;
    if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) !=
        6)
        return -1;
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)v[i];
    return 0;
}

int nfr_parse_ip(const char *s, uint8_t ip[4])
{
    unsigned v[4];
    char tail;
    if (sscanf(s, "%u.%u.%u.%u%c", &v[0], &v[1], &v[2], &v[3], &tail) != 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (v[i] > 255)
            return -1;
        ip[i] = (uint8_t)v[i];
    }
    return 0;
}
