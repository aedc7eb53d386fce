/* usclock_rec.h - append the clocked PCM's records (usck.h) to its file. */
#ifndef SND_USCLOCK_REC_H
#define SND_USCLOCK_REC_H

#include <stddef.h>
#include <stdint.h>

#include "usck.h"

/* A record's payload in at most two pieces (a period that wraps the ring). */
struct usck_payload {
    const void *p[2];
    size_t len[2];
};

/* Appends one record (hdr's magic and len are filled in); -errno on failure.
 * One writev per record on an O_APPEND fd, so streams of several processes
 * appending to one file do not interleave within a record. */
int usck_append(int fd, struct usck_rec *hdr, const struct usck_payload *pl);

#endif
