/* sb_fifo.c - a stream's octet FIFO between the frontend's requests and
 * the PCM (a ring of fifo_size octets).
 */
#define _GNU_SOURCE
#include "sb.h"

#include <string.h>

size_t sb_fifo_put(struct sb_pcm *p, const uint8_t *src, size_t n)
{
    size_t room = p->fifo_size - p->fifo_len;
    if (n > room)
        n = room;
    size_t tail = (p->fifo_head + p->fifo_len) % p->fifo_size;
    size_t a = p->fifo_size - tail < n ? p->fifo_size - tail : n;
    memcpy(p->fifo + tail, src, a);
    memcpy(p->fifo, src + a, n - a);
    p->fifo_len += n;
    return n;
}

size_t sb_fifo_peek(const struct sb_pcm *p, uint8_t *dst, size_t n)
{
    if (n > p->fifo_len)
        n = p->fifo_len;
    size_t a = p->fifo_size - p->fifo_head < n ? p->fifo_size - p->fifo_head : n;
    memcpy(dst, p->fifo + p->fifo_head, a);
    memcpy(dst + a, p->fifo, n - a);
    return n;
}

void sb_fifo_drop(struct sb_pcm *p, size_t n)
{
    if (n > p->fifo_len)
        n = p->fifo_len;
    if (p->fifo_size)
        p->fifo_head = (p->fifo_head + n) % p->fifo_size;
    p->fifo_len -= n;
}

size_t sb_fifo_get(struct sb_pcm *p, uint8_t *dst, size_t n)
{
    n = sb_fifo_peek(p, dst, n);
    sb_fifo_drop(p, n);
    return n;
}
