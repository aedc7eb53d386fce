/* bb_disk.c - the backing store: a regular file or a block device.
 *
 * cache=none opens a second, O_DIRECT descriptor; requests whose buffers or
 * offset are not aligned for it (or that it refuses with EINVAL) go through
 * the buffered one, which the kernel keeps coherent with direct I/O.
 */
#define _GNU_SOURCE
#include "bb.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_bdev_geometry(struct bb_dev *d, struct bb_disk *k)
{
    uint64_t bytes;
    int lbs = 512, pbs = 512;
    if (ioctl(k->fd, BLKGETSIZE64, &bytes) < 0) {
        be_error(d->be, errno, "params: %s: BLKGETSIZE64: %s", d->cfg.path, strerror(errno));
        return -1;
    }
    ioctl(k->fd, BLKSSZGET, &lbs);
    ioctl(k->fd, BLKPBSZGET, &pbs);
    k->sectors = bytes / BB_SECTOR_SIZE;
    k->dio_align = lbs > 0 ? (unsigned)lbs : 512;
    k->phys_sector_size = pbs >= 512 && pbs <= 65536 ? (unsigned)pbs : 512;
    k->can_discard = true; /* BLKDISCARD says EOPNOTSUPP if not */
    k->discard_granularity = k->phys_sector_size;
    return 0;
}

int bb_disk_open(struct bb_dev *d)
{
    struct bb_disk *k = &d->disk;
    const char *path = d->cfg.path;
    memset(k, 0, sizeof(*k));
    k->fd = k->fd_direct = -1;
    struct stat st;
    if (stat(path, &st) < 0) {
        be_error(d->be, errno, "params: %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
        be_error(d->be, EINVAL, "params: %s: neither a regular file nor a block device", path);
        return -1;
    }
    k->is_bdev = S_ISBLK(st.st_mode);
    int flags = (d->cfg.readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
    k->fd = open(path, flags);
    if (k->fd < 0) {
        be_error(d->be, errno, "params: opening %s %s: %s", path,
                 d->cfg.readonly ? "read-only" : "read-write", strerror(errno));
        return -1;
    }
    if (k->is_bdev) {
        if (open_bdev_geometry(d, k) < 0)
            return -1;
    } else {
        k->sectors = (uint64_t)st.st_size / BB_SECTOR_SIZE;
        k->dio_align = BB_SECTOR_SIZE;
        k->phys_sector_size = BB_SECTOR_SIZE;
        k->can_discard = true; /* FALLOC_FL_PUNCH_HOLE says EOPNOTSUPP if not */
        k->discard_granularity = st.st_blksize > 0 ? (unsigned)st.st_blksize : 4096;
    }
    if (k->sectors == 0) {
        be_error(d->be, EINVAL, "params: %s is smaller than one sector", path);
        return -1;
    }
    if (d->cfg.cache == BB_CACHE_NONE) {
        k->fd_direct = open(path, flags | O_DIRECT);
        if (k->fd_direct < 0)
            BE_LOG(d->be,
                   "params: %s: O_DIRECT refused (%s); cache=none falls back to the "
                   "page cache",
                   path, strerror(errno));
    }
    return 0;
}

void bb_disk_close(struct bb_disk *k)
{
    if (k->fd_direct >= 0)
        close(k->fd_direct);
    if (k->fd >= 0)
        close(k->fd);
    k->fd = k->fd_direct = -1;
}

int bb_disk_discard(struct bb_disk *k, uint64_t sector, uint64_t nr)
{
    if (!nr)
        return 0;
    uint64_t off = sector * BB_SECTOR_SIZE, len = nr * BB_SECTOR_SIZE;
    int r;
    if (k->is_bdev) {
        uint64_t range[2] = {off, len};
        r = ioctl(k->fd, BLKDISCARD, range);
    } else {
        r = fallocate(k->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
    }
    return r < 0 ? -errno : 0;
}

int bb_disk_rw(int fd, bool write, const struct iovec *iov, unsigned niov, uint64_t off,
               size_t done, size_t total)
{
    struct iovec v[BB_MAX_INDIRECT_SEGS];
    while (done < total) {
        /* The iovecs from byte done on. */
        unsigned n = 0;
        size_t skip = done;
        for (unsigned i = 0; i < niov && n < BB_MAX_INDIRECT_SEGS; i++) {
            if (skip >= iov[i].iov_len) {
                skip -= iov[i].iov_len;
                continue;
            }
            v[n].iov_base = (char *)iov[i].iov_base + skip;
            v[n].iov_len = iov[i].iov_len - skip;
            skip = 0;
            n++;
        }
        ssize_t got = write ? pwritev(fd, v, (int)n, (off_t)(off + done))
                            : preadv(fd, v, (int)n, (off_t)(off + done));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (got == 0)
            return -EIO; /* the file shrank under us */
        done += (size_t)got;
    }
    return 0;
}
