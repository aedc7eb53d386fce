/* usclock_rec.c - append records to the clocked PCM's recording. */
#define _GNU_SOURCE
#include "usclock_rec.h"

#include <errno.h>
#include <sys/uio.h>

int usck_append(int fd, struct usck_rec *hdr, const struct usck_payload *pl)
{
    struct iovec iov[3];
    int n = 1;
    size_t want = sizeof(*hdr);

    hdr->magic = USCK_MAGIC;
    hdr->len = 0;
    iov[0].iov_base = hdr;
    iov[0].iov_len = sizeof(*hdr);
    for (int i = 0; pl && i < 2; i++) {
        if (!pl->len[i])
            continue;
        iov[n].iov_base = (void *)pl->p[i];
        iov[n].iov_len = pl->len[i];
        hdr->len += (uint32_t)pl->len[i];
        want += pl->len[i];
        n++;
    }
    ssize_t w = writev(fd, iov, n);
    if (w < 0)
        return -errno;
    return (size_t)w == want ? 0 : -EIO;
}
