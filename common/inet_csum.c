/* inet_csum.c - Internet checksums (see inet_csum.h). */
#define _GNU_SOURCE
#include "inet_csum.h"

#include <errno.h>

uint32_t inet_csum_add(uint32_t sum, const void *p, size_t len)
{
    const uint8_t *b = p;
    uint64_t s = sum; /* 64 bits: no carry is lost before the fold below */
    size_t i = 0;
    for (; i + 1 < len; i += 2)
        s += (uint32_t)b[i] << 8 | b[i + 1];
    if (i < len)
        s += (uint32_t)b[i] << 8; /* an odd byte is the high half of a zero-padded word */
    while (s >> 32)
        s = (s & 0xffffffffu) + (s >> 32);
    return (uint32_t)s;
}

uint16_t inet_csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffffu) + (sum >> 16);
    return (uint16_t)sum;
}

uint16_t inet_csum_finish(uint32_t sum)
{
    return (uint16_t)~inet_csum_fold(sum);
}

static uint32_t add32(uint32_t sum, uint32_t v)
{
    uint64_t s = (uint64_t)sum + (v >> 16) + (v & 0xffffu);
    return (uint32_t)((s & 0xffffffffu) + (s >> 32));
}

uint32_t inet_csum_pseudo4(const uint8_t src[4], const uint8_t dst[4], unsigned proto,
                           uint32_t l4len)
{
    uint32_t s = inet_csum_add(inet_csum_add(0, src, 4), dst, 4);
    return add32(add32(s, proto & 0xffu), l4len);
}

uint32_t inet_csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], unsigned proto,
                           uint32_t l4len)
{
    uint32_t s = inet_csum_add(inet_csum_add(0, src, 16), dst, 16);
    return add32(add32(s, proto & 0xffu), l4len);
}

int inet_csum_complete(uint8_t *p, size_t len, size_t start, size_t off)
{
    if (start > len || off > len - start || len - start - off < 2) {
        errno = ERANGE;
        return -1;
    }
    uint16_t c = inet_csum_finish(inet_csum_add(0, p + start, len - start));
    if (c == 0)
        c = 0xffff;
    p[start + off] = (uint8_t)(c >> 8);
    p[start + off + 1] = (uint8_t)c;
    return 0;
}
