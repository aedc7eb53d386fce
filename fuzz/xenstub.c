/* xenstub.c - libxengnttab's gntshr and libxenevtchn's calls, without Xen
 * (xenstub.h). */
#define _GNU_SOURCE
#include "xenstub.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u

static int dummy_gs, dummy_xce;
/* Unshared blocks kept for reuse: a target shares the same sizes every run,
 * and fresh multi-megabyte allocations under ASan would dominate its time. */
#define CACHE 16
static struct {
    void *p;
    uint32_t count;
} cache[CACHE];
static uint32_t next_ref = 8;
static int next_port = 1;

xengntshr_handle *xengntshr_open(struct xentoollog_logger *logger, unsigned open_flags)
{
    (void)logger;
    (void)open_flags;
    return (xengntshr_handle *)&dummy_gs;
}

int xengntshr_close(xengntshr_handle *xgs)
{
    (void)xgs;
    return 0;
}

void *xengntshr_share_pages(xengntshr_handle *xgs, uint32_t domid, int count, uint32_t *refs,
                            int writable)
{
    (void)xgs;
    (void)domid;
    (void)writable;
    if (count <= 0) {
        errno = EINVAL;
        return NULL;
    }
    void *p = NULL;
    for (unsigned i = 0; i < CACHE && !p; i++)
        if (cache[i].p && cache[i].count == (uint32_t)count) {
            p = cache[i].p;
            cache[i].p = NULL;
        }
    if (!p)
        p = aligned_alloc(PAGE, (size_t)count * PAGE);
    if (!p)
        return NULL;
    memset(p, 0, (size_t)count * PAGE);
    for (int i = 0; i < count; i++)
        refs[i] = next_ref++;
    return p;
}

int xengntshr_unshare(xengntshr_handle *xgs, void *start_address, uint32_t count)
{
    (void)xgs;
    for (unsigned i = 0; i < CACHE; i++)
        if (!cache[i].p) {
            cache[i].p = start_address;
            cache[i].count = count;
            return 0;
        }
    free(start_address);
    return 0;
}

xenevtchn_handle *xenevtchn_open(struct xentoollog_logger *logger, unsigned open_flags)
{
    (void)logger;
    (void)open_flags;
    return (xenevtchn_handle *)&dummy_xce;
}

int xenevtchn_close(xenevtchn_handle *xce)
{
    (void)xce;
    return 0;
}

int xenevtchn_fd(xenevtchn_handle *xce)
{
    (void)xce;
    return -1;
}

xenevtchn_port_or_error_t xenevtchn_bind_unbound_port(xenevtchn_handle *xce, uint32_t domid)
{
    (void)xce;
    (void)domid;
    return next_port++;
}

int xenevtchn_unbind(xenevtchn_handle *xce, evtchn_port_t port)
{
    (void)xce;
    (void)port;
    return 0;
}

int xenevtchn_notify(xenevtchn_handle *xce, evtchn_port_t port)
{
    (void)xce;
    (void)port;
    return 0;
}

xenevtchn_port_or_error_t xenevtchn_pending(xenevtchn_handle *xce)
{
    (void)xce;
    errno = EAGAIN;
    return -1;
}

int xenevtchn_unmask(xenevtchn_handle *xce, evtchn_port_t port)
{
    (void)xce;
    (void)port;
    return 0;
}
