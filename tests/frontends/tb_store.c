/* tb_store.c - testback's backing store: a file, with an optional volatile
 * write cache (sectors held in this process until a flush; lost when the
 * process dies, as a disk's volatile cache is on power loss). */
#define _GNU_SOURCE
#include "tb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECTOR    512u
#define CACHE_MAX (64u * 1024u * 2u) /* sectors: 64 MiB */

struct tb_store {
    int fd;
    enum tb_cache cache;
    /* volatile cache: open addressing, sector+1 as key (0 = empty) */
    uint64_t *keys;
    uint8_t *data;
    unsigned cap, used;
};

static unsigned slot_of(const struct tb_store *s, uint64_t sector)
{
    uint64_t h = sector * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 20) & (s->cap - 1);
}

static int find(const struct tb_store *s, uint64_t sector)
{
    for (unsigned i = slot_of(s, sector);; i = (i + 1) & (s->cap - 1)) {
        if (s->keys[i] == sector + 1)
            return (int)i;
        if (!s->keys[i])
            return -(int)i - 1;
    }
}

static int full_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, buf, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf = (const char *)buf + n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

static int full_pread(int fd, void *buf, size_t len, off_t off)
{
    while (len) {
        ssize_t n = pread(fd, buf, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) { /* past the end: zeros */
            memset(buf, 0, len);
            return 0;
        }
        buf = (char *)buf + n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

/* Write every cached sector to the file and forget them. */
static int write_back(struct tb_store *s)
{
    for (unsigned i = 0; i < s->cap; i++) {
        if (!s->keys[i])
            continue;
        if (full_pwrite(s->fd, s->data + (size_t)i * SECTOR, SECTOR,
                        (off_t)((s->keys[i] - 1) * SECTOR)) < 0)
            return -1;
        s->keys[i] = 0;
    }
    s->used = 0;
    return 0;
}

struct tb_store *tb_store_open(const char *path, enum tb_cache cache, uint64_t *bytes)
{
    struct tb_store *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->cache = cache;
    s->fd = open(path, O_RDWR | O_CLOEXEC);
    if (s->fd < 0)
        goto fail;
    struct stat st;
    if (fstat(s->fd, &st) < 0)
        goto fail;
    *bytes = (uint64_t)st.st_size;
    if (cache == TB_CACHE_VOLATILE) {
        s->cap = CACHE_MAX * 2; /* load at most 1/2 */
        s->keys = calloc(s->cap, sizeof(*s->keys));
        s->data = malloc((size_t)s->cap * SECTOR);
        if (!s->keys || !s->data)
            goto fail;
    }
    return s;
fail : {
    int e = errno;
    tb_store_close(s);
    errno = e;
    return NULL;
}
}

void tb_store_close(struct tb_store *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->keys);
    free(s->data);
    free(s);
}

int tb_store_read(struct tb_store *s, void *buf, uint64_t len, uint64_t off)
{
    if (full_pread(s->fd, buf, len, (off_t)off) < 0)
        return -1;
    if (s->cache != TB_CACHE_VOLATILE || !s->used)
        return 0;
    for (uint64_t o = 0; o < len; o += SECTOR) {
        int i = find(s, (off + o) / SECTOR);
        if (i >= 0)
            memcpy((uint8_t *)buf + o, s->data + (size_t)i * SECTOR, SECTOR);
    }
    return 0;
}

int tb_store_write(struct tb_store *s, const void *buf, uint64_t len, uint64_t off)
{
    if (s->cache != TB_CACHE_VOLATILE)
        return full_pwrite(s->fd, buf, len, (off_t)off);
    if (s->used + len / SECTOR > CACHE_MAX && write_back(s) < 0)
        return -1;
    for (uint64_t o = 0; o < len; o += SECTOR) {
        int i = find(s, (off + o) / SECTOR);
        if (i < 0) {
            i = -i - 1;
            s->keys[i] = (off + o) / SECTOR + 1;
            s->used++;
        }
        memcpy(s->data + (size_t)i * SECTOR, (const uint8_t *)buf + o, SECTOR);
    }
    return 0;
}

int tb_store_flush(struct tb_store *s)
{
    if (s->cache == TB_CACHE_VOLATILE && write_back(s) < 0)
        return -1;
    return fdatasync(s->fd);
}

int tb_store_discard(struct tb_store *s, uint64_t len, uint64_t off)
{
    if (s->cache == TB_CACHE_VOLATILE && write_back(s) < 0)
        return -1;
    return fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
}
