/* bb_vcache.c - the volatile write cache: a chained hash of 4 KiB chunks,
 * each with a bitmap of the sectors it holds.
 */
#define _GNU_SOURCE
#include "bb_vcache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECT       512u
#define CHUNK_SECT 8u

struct chunk {
    struct chunk *next;
    uint64_t index; /* sector / CHUNK_SECT */
    uint8_t mask;   /* bit i: sector index*8+i is held */
    unsigned char data[CHUNK_SECT * SECT];
};

struct bb_vcache {
    struct chunk **buckets;
    size_t nbuckets; /* a power of two */
    size_t nchunks;
    size_t nsectors;
};

static size_t hash(uint64_t index, size_t n)
{
    return (size_t)((index * 0x9e3779b97f4a7c15ull) >> 17) & (n - 1);
}

struct bb_vcache *bb_vcache_new(void)
{
    struct bb_vcache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->nbuckets = 256;
    c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
    if (!c->buckets) {
        free(c);
        return NULL;
    }
    return c;
}

void bb_vcache_free(struct bb_vcache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (struct chunk *ch = c->buckets[i], *next; ch; ch = next) {
            next = ch->next;
            free(ch);
        }
    }
    free(c->buckets);
    free(c);
}

static struct chunk *find(const struct bb_vcache *c, uint64_t index)
{
    for (struct chunk *ch = c->buckets[hash(index, c->nbuckets)]; ch; ch = ch->next)
        if (ch->index == index)
            return ch;
    return NULL;
}

static void grow(struct bb_vcache *c)
{
    size_t n = c->nbuckets * 2;
    struct chunk **b = calloc(n, sizeof(*b));
    if (!b)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (struct chunk *ch = c->buckets[i], *next; ch; ch = next) {
            next = ch->next;
            size_t h = hash(ch->index, n);
            ch->next = b[h];
            b[h] = ch;
        }
    }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = n;
}

static struct chunk *find_or_add(struct bb_vcache *c, uint64_t index)
{
    struct chunk *ch = find(c, index);
    if (ch)
        return ch;
    if (c->nchunks >= c->nbuckets)
        grow(c);
    ch = calloc(1, sizeof(*ch));
    if (!ch)
        return NULL;
    ch->index = index;
    size_t h = hash(index, c->nbuckets);
    ch->next = c->buckets[h];
    c->buckets[h] = ch;
    c->nchunks++;
    return ch;
}

static void remove_chunk(struct bb_vcache *c, struct chunk *victim)
{
    for (struct chunk **p = &c->buckets[hash(victim->index, c->nbuckets)]; *p; p = &(*p)->next) {
        if (*p == victim) {
            *p = victim->next;
            free(victim);
            c->nchunks--;
            return;
        }
    }
}

/* Walk iov sector by sector: calls fn(sector, ptr) for each. */
typedef bool sector_fn(void *ctx, uint64_t sector, unsigned char *p);
static bool walk(uint64_t sector, const struct iovec *iov, unsigned niov, sector_fn *fn, void *ctx)
{
    for (unsigned i = 0; i < niov; i++) {
        unsigned char *base = iov[i].iov_base;
        for (size_t off = 0; off + SECT <= iov[i].iov_len; off += SECT)
            if (!fn(ctx, sector++, base + off))
                return false;
    }
    return true;
}

/* Make sure every chunk a write touches exists, so the copy cannot fail half-way. */
static bool reserve_one(void *ctx, uint64_t sector, unsigned char *p)
{
    (void)p;
    return find_or_add(ctx, sector / CHUNK_SECT) != NULL;
}

static bool store_one(void *ctx, uint64_t sector, unsigned char *p)
{
    struct bb_vcache *c = ctx;
    struct chunk *ch = find(c, sector / CHUNK_SECT);
    if (!ch) /* reserve_one made it */
        return false;
    unsigned bit = (unsigned)(sector % CHUNK_SECT);
    memcpy(ch->data + bit * SECT, p, SECT);
    if (!(ch->mask & (1u << bit))) {
        ch->mask |= (uint8_t)(1u << bit);
        c->nsectors++;
    }
    return true;
}

/* Chunks reserve_one created but store_one never filled (after ENOMEM). */
static void drop_empty(struct bb_vcache *c)
{
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (struct chunk **p = &c->buckets[i]; *p;) {
            struct chunk *ch = *p;
            if (ch->mask) {
                p = &ch->next;
                continue;
            }
            *p = ch->next;
            free(ch);
            c->nchunks--;
        }
    }
}

int bb_vcache_write(struct bb_vcache *c, uint64_t sector, const struct iovec *iov, unsigned niov)
{
    if (!walk(sector, iov, niov, reserve_one, c)) {
        drop_empty(c);
        errno = ENOMEM;
        return -1;
    }
    walk(sector, iov, niov, store_one, c);
    return 0;
}

static bool overlay_one(void *ctx, uint64_t sector, unsigned char *p)
{
    const struct bb_vcache *c = ctx;
    const struct chunk *ch = find(c, sector / CHUNK_SECT);
    unsigned bit = (unsigned)(sector % CHUNK_SECT);
    if (ch && (ch->mask & (1u << bit)))
        memcpy(p, ch->data + bit * SECT, SECT);
    return true;
}

void bb_vcache_overlay(const struct bb_vcache *c, uint64_t sector, const struct iovec *iov,
                       unsigned niov)
{
    if (c->nsectors)
        walk(sector, iov, niov, overlay_one, (void *)c);
}

void bb_vcache_drop(struct bb_vcache *c, uint64_t sector, uint64_t nr)
{
    if (!c->nsectors || !nr)
        return;
    if (nr / CHUNK_SECT > c->nchunks) {
        /* A huge range: scan the chunks rather than the range. */
        for (size_t i = 0; i < c->nbuckets; i++) {
            for (struct chunk *ch = c->buckets[i], *next; ch; ch = next) {
                next = ch->next;
                for (unsigned b = 0; b < CHUNK_SECT; b++) {
                    uint64_t s = ch->index * CHUNK_SECT + b;
                    if ((ch->mask & (1u << b)) && s >= sector && s - sector < nr) {
                        ch->mask &= (uint8_t) ~(1u << b);
                        c->nsectors--;
                    }
                }
                if (!ch->mask)
                    remove_chunk(c, ch);
            }
        }
        return;
    }
    for (uint64_t s = sector; s - sector < nr; s++) {
        struct chunk *ch = find(c, s / CHUNK_SECT);
        if (!ch) {
            s |= CHUNK_SECT - 1; /* skip to the chunk's last sector */
            continue;
        }
        unsigned bit = (unsigned)(s % CHUNK_SECT);
        if (ch->mask & (1u << bit)) {
            ch->mask &= (uint8_t) ~(1u << bit);
            c->nsectors--;
        }
        if (!ch->mask)
            remove_chunk(c, ch);
    }
}

static int pwrite_all(int fd, const unsigned char *p, size_t len, off_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, p, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

int bb_vcache_writeback(struct bb_vcache *c, int fd)
{
    for (size_t i = 0; i < c->nbuckets; i++) {
        while (c->buckets[i]) {
            struct chunk *ch = c->buckets[i];
            /* Each run of held sectors in one pwrite. */
            for (unsigned b = 0; b < CHUNK_SECT;) {
                if (!(ch->mask & (1u << b))) {
                    b++;
                    continue;
                }
                unsigned e = b;
                while (e < CHUNK_SECT && (ch->mask & (1u << e)))
                    e++;
                off_t off = (off_t)((ch->index * CHUNK_SECT + b) * SECT);
                if (pwrite_all(fd, ch->data + b * SECT, (e - b) * SECT, off) < 0)
                    return -1;
                for (unsigned k = b; k < e; k++)
                    ch->mask &= (uint8_t) ~(1u << k);
                c->nsectors -= e - b;
                b = e;
            }
            c->buckets[i] = ch->next;
            free(ch);
            c->nchunks--;
        }
    }
    return 0;
}

size_t bb_vcache_held(const struct bb_vcache *c)
{
    return c->nsectors * SECT;
}

size_t bb_vcache_bytes(const struct bb_vcache *c)
{
    /* What is allocated, not what is held: one sector written every 4 KiB
     * holds 512 bytes in a chunk of 4 KiB and more. */
    return sizeof(*c) + c->nbuckets * sizeof(*c->buckets) + c->nchunks * sizeof(struct chunk);
}
