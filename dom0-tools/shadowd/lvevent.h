/* lvevent.h - libvirt's event loop implementation (virEventRegisterImpl) on
 * shadowd's one poll loop: libvirt's handles become pollfds in the libvirt
 * driver's prepoll, its timeouts shorten the poll timeout, and postpoll
 * dispatches both. Single-threaded: everything runs on shadowd's thread. */
#ifndef SD_LVEVENT_H
#define SD_LVEVENT_H

#include <poll.h>

/* Register the implementation with libvirt (once per process, before the
 * first virConnectOpen). */
void sd_lvevent_register(void);
/* Add libvirt's fds (up to max), lower *timeout_ms to its next timeout. */
int sd_lvevent_prepoll(struct pollfd *fds, int max, int *timeout_ms);
/* Dispatch ready handles and due timeouts; free what libvirt removed. */
void sd_lvevent_postpoll(const struct pollfd *fds, int n);
/* Only run the free functions of what libvirt removed (postpoll does it too). */
void sd_lvevent_sweep(void);

#endif
