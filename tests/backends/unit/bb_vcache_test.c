/* bb_vcache_test - the volatile write cache (bb_vcache.c): held writes
 * are what reads see, nothing reaches the file before a writeback, a
 * writeback writes exactly the held sectors, a discard forgets them. */
#define _GNU_SOURCE
#include "bb_vcache.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S 512

static void fill(unsigned char *p, size_t n, unsigned char v)
{
    memset(p, v, n);
}

static int tmpfile_of(size_t sectors)
{
    char path[] = "/tmp/vcache-test.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    if (ftruncate(fd, (off_t)(sectors * S)) < 0)
        return -1;
    return fd;
}

static unsigned char sector_byte(int fd, uint64_t sector)
{
    unsigned char b = 0;
    if (pread(fd, &b, 1, (off_t)(sector * S)) != 1)
        return 0xFF;
    return b;
}

/* One sector every 4 KiB: the cache counts the chunks it allocates, not the
 * 512 bytes of each it holds (else a guest grows it eight times past its
 * limit before it is written back). */
static void sparse_writes_count_allocation(void)
{
    struct bb_vcache *c = bb_vcache_new();
    CHECK(c != NULL);
    unsigned char s[S];
    fill(s, sizeof(s), 0x5A);
    struct iovec iov = {s, sizeof(s)};
    for (uint64_t k = 0; k < 1000; k++)
        CHECK_EQ(bb_vcache_write(c, k * 8, &iov, 1), 0);
    CHECK_EQ(bb_vcache_held(c), 1000 * S);
    CHECK(bb_vcache_bytes(c) >= 1000 * 8 * S);
    bb_vcache_free(c);
}

int main(void)
{
    sparse_writes_count_allocation();
    struct bb_vcache *c = bb_vcache_new();
    CHECK(c != NULL);
    int fd = tmpfile_of(64);
    CHECK(fd >= 0);

    /* A write spanning two chunks, in two iovecs. */
    unsigned char a[3 * S], b[2 * S];
    fill(a, sizeof(a), 0xA1);
    fill(b, sizeof(b), 0xB2);
    struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
    CHECK_EQ(bb_vcache_write(c, 6, iov, 2), 0); /* sectors 6..10 */
    CHECK_EQ(bb_vcache_held(c), 5 * S);
    CHECK_EQ(sector_byte(fd, 6), 0); /* nothing reached the file */

    /* A read of 4..11 sees held sectors over the file's zeros. */
    unsigned char r[8 * S];
    fill(r, sizeof(r), 0);
    struct iovec riov = {r, sizeof(r)};
    bb_vcache_overlay(c, 4, &riov, 1);
    CHECK_EQ(r[0], 0);            /* sector 4 */
    CHECK_EQ(r[2 * S], 0xA1);     /* sector 6 */
    CHECK_EQ(r[5 * S], 0xB2);     /* sector 9 */
    CHECK_EQ(r[6 * S + 1], 0xB2); /* sector 10 */
    CHECK_EQ(r[7 * S], 0);        /* sector 11 */

    /* Overwrite: the newest data wins; the count does not double. */
    unsigned char n[S];
    fill(n, sizeof(n), 0xC3);
    struct iovec niov = {n, sizeof(n)};
    CHECK_EQ(bb_vcache_write(c, 7, &niov, 1), 0);
    CHECK_EQ(bb_vcache_held(c), 5 * S);
    bb_vcache_overlay(c, 4, &riov, 1);
    CHECK_EQ(r[3 * S], 0xC3);

    /* A discard of 9..100 forgets 9 and 10 only. */
    bb_vcache_drop(c, 9, 92);
    CHECK_EQ(bb_vcache_held(c), 3 * S);
    /* A huge discard range takes the scan path. */
    bb_vcache_drop(c, 8, UINT64_MAX / 2);
    CHECK_EQ(bb_vcache_held(c), 2 * S);

    /* Writeback: exactly sectors 6 and 7 reach the file; the cache is empty. */
    CHECK_EQ(bb_vcache_writeback(c, fd), 0);
    CHECK_EQ(bb_vcache_held(c), 0);
    CHECK_EQ(sector_byte(fd, 5), 0);
    CHECK_EQ(sector_byte(fd, 6), 0xA1);
    CHECK_EQ(sector_byte(fd, 7), 0xC3);
    CHECK_EQ(sector_byte(fd, 8), 0);
    CHECK_EQ(sector_byte(fd, 9), 0);

    /* Many chunks: the hash grows and keeps everything. */
    for (uint64_t s = 0; s < 4000; s += 3) {
        unsigned char v[S];
        fill(v, S, (unsigned char)(s % 251));
        struct iovec viov = {v, S};
        CHECK_EQ(bb_vcache_write(c, s * 8, &viov, 1), 0);
    }
    CHECK_EQ(bb_vcache_held(c), 1334 * S);
    unsigned char one[S];
    struct iovec oiov = {one, S};
    fill(one, S, 0);
    bb_vcache_overlay(c, 2997 * 8, &oiov, 1);
    CHECK_EQ(one[100], 2997 % 251);

    bb_vcache_free(c);
    bb_vcache_free(NULL);
    close(fd);
    return check_done("bb_vcache_test");
}
