/* bb_vcache.h - the "volatile" write cache: acknowledged writes held in the
 * backend's own memory until a flush writes them to the backing file, so the
 * device behaves like a disk with a volatile write cache (what was not
 * flushed is lost when the process dies). Reads overlay held data on what
 * the file returns. Granularity: 512-byte sectors, held in 4 KiB chunks.
 */
#ifndef BB_VCACHE_H
#define BB_VCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct bb_vcache;

struct bb_vcache *bb_vcache_new(void);
void bb_vcache_free(struct bb_vcache *c);

/* Hold the data of iov (a multiple of 512 bytes) for sectors from sector on.
 * 0, or -1 with errno ENOMEM (nothing changed then). */
int bb_vcache_write(struct bb_vcache *c, uint64_t sector, const struct iovec *iov, unsigned niov);
/* Copy held sectors over iov, which holds what the file has from sector on. */
void bb_vcache_overlay(const struct bb_vcache *c, uint64_t sector, const struct iovec *iov,
                       unsigned niov);
/* Forget held data of nr sectors from sector (a discard). */
void bb_vcache_drop(struct bb_vcache *c, uint64_t sector, uint64_t nr);
/* Write every held sector to fd (pwrite), then forget them. The caller
 * flushes fd. 0, or -1 with errno (what was not written is still held). */
int bb_vcache_writeback(struct bb_vcache *c, int fd);
/* Bytes of data held (sectors times 512). */
size_t bb_vcache_held(const struct bb_vcache *c);
/* Bytes the cache has allocated for it: what its limit counts. */
size_t bb_vcache_bytes(const struct bb_vcache *c);

#endif
