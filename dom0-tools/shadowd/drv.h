/* drv.h - domain drivers: the one small interface through which shadowd
 * finds, creates, destroys and watches driver domains. One instance per
 * driver kind serves every domain of that kind; per-domain settings come
 * with each call. Drivers: drv_xensim.c (the simulator's control socket),
 * drv_libxl.c (real Xen, from an xl config file), drv_libvirt.c (libvirt,
 * from a domain definition).
 *
 * Operations that take time on real Xen (create, destroy) may complete
 * later: they return SD_DRV_PENDING and the driver calls done() from its
 * postpoll hook, never from inside the call that started them. */
#ifndef SD_DRV_H
#define SD_DRV_H

#include "conf.h"

#include <poll.h>
#include <stdint.h>
#include <stdio.h>

enum sd_run {
    SD_RUN_RUNNING = 0,
    SD_RUN_PAUSED,
    SD_RUN_SHUTDOWN, /* stopped with a reason, not yet destroyed */
    SD_RUN_DYING,
    SD_RUN_GONE, /* no such domain */
};

/* Shutdown reasons: SHUTDOWN_* of xen/sched.h. */
#define SD_SHUT_POWEROFF 0
#define SD_SHUT_REBOOT   1
#define SD_SHUT_SUSPEND  2
#define SD_SHUT_CRASH    3
#define SD_SHUT_WATCHDOG 4

struct sd_domstat {
    enum sd_run run;
    int reason;           /* SD_SHUT_* once shut down; -1 unknown or not shut down */
    uint64_t shutdown_ms; /* CLOCK_MONOTONIC of the shutdown; 0 unknown */
    char name[64];
};

enum sd_drv_op { SD_OP_CREATE = 1, SD_OP_DESTROY };

#define SD_DRV_DONE    0
#define SD_DRV_PENDING 1

struct sd_drv_hooks {
    /* An asynchronous operation finished: rc 0 (domid valid for CREATE) or
     * -1 with a message. */
    void (*done)(void *ctx, void *arg, enum sd_drv_op op, int rc, unsigned domid, const char *err);
    /* Something happened to domid (died, shut down): look at it again. */
    void (*changed)(void *ctx, unsigned domid);
    void *ctx;
};

struct sd_drv;

struct sd_drv_ops {
    const char *name;
    /* shadowd -n: check a domain's driver-specific settings without touching
     * Xen (the libxl driver parses the xl config file). Messages go to err as
     * "FILE:LINE: ..."; returns 0 or -1. */
    int (*check)(const struct sd_domconf *d, FILE *err);
    struct sd_drv *(*open)(const struct sd_conf *c, const struct sd_drv_hooks *h, char *err,
                           size_t errlen);
    void (*close)(struct sd_drv *drv);
    /* The domain called name (running or shut down but not destroyed):
     * 0 and *domid, or -1 with errno ENOENT (none) or another error. */
    int (*find)(struct sd_drv *drv, const char *name, unsigned *domid, char *err, size_t errlen);
    /* 0, or -1 with a message (a domain that does not exist is SD_RUN_GONE, not an error). */
    int (*info)(struct sd_drv *drv, unsigned domid, struct sd_domstat *st, char *err,
                size_t errlen);
    /* The states of n domains in one call, without their names (st[i] for
     * domids[i]; one not found is SD_RUN_GONE): 0, or -1 with a message.
     * Optional - sd_drv_look asks info of each without it. A failure's
     * detection looks at every domain at once: on real Xen each call is a
     * round trip that waits behind everyone's reaction to @releaseDomain. */
    int (*look)(struct sd_drv *drv, const unsigned *domids, unsigned n, struct sd_domstat *st,
                char *err, size_t errlen);
    /* Create domain d under the name name (d->name, or its standby's name):
     * SD_DRV_DONE (*domid set), SD_DRV_PENDING (done() later, with arg), or -1.
     * boost: the domain to serve now (a start or a restart), which boots at
     * d's boot-weight until settle(); a standby is created without. */
    int (*create)(struct sd_drv *drv, const struct sd_domconf *d, const char *name, bool boost,
                  void *arg, unsigned *domid, char *err, size_t errlen);
    int (*destroy)(struct sd_drv *drv, unsigned domid, void *arg, char *err, size_t errlen);
    /* Fault injection: stop the domain's vcpus / make it crash. 0 or -1. */
    int (*pause)(struct sd_drv *drv, unsigned domid, char *err, size_t errlen);
    int (*crash)(struct sd_drv *drv, unsigned domid, char *err, size_t errlen);
    /* Let a domain stopped by pause() run again: a standby held through a
     * recovery (standby.c). 0 or -1. */
    int (*unpause)(struct sd_drv *drv, unsigned domid, char *err, size_t errlen);
    /* Domain domid of d (created with boost) serves: give it the
     * scheduler weight its config asks for. Optional (boot-weight is for
     * drivers that have it); idempotent. 0 or -1. */
    int (*settle)(struct sd_drv *drv, const struct sd_domconf *d, unsigned domid, char *err,
                  size_t errlen);
    /* Start / stop reporting changed() for domid (optional). */
    int (*watch)(struct sd_drv *drv, unsigned domid);
    void (*unwatch)(struct sd_drv *drv, unsigned domid);
    /* Event loop integration (optional): add up to max fds, shorten
     * *timeout_ms (-1: none); after poll, look at them. Returns fds added. */
    int (*prepoll)(struct sd_drv *drv, struct pollfd *fds, int max, int *timeout_ms);
    void (*postpoll)(struct sd_drv *drv, struct pollfd *fds, int n);
};

static inline int sd_drv_look(const struct sd_drv_ops *ops, struct sd_drv *drv,
                              const unsigned *domids, unsigned n, struct sd_domstat *st, char *err,
                              size_t errlen)
{
    if (ops->look)
        return ops->look(drv, domids, n, st, err, errlen);
    for (unsigned i = 0; i < n; i++)
        if (ops->info(drv, domids[i], &st[i], err, errlen) < 0)
            return -1;
    return 0;
}

extern const struct sd_drv_ops sd_drv_xensim;
extern const struct sd_drv_ops sd_drv_libxl;
extern const struct sd_drv_ops sd_drv_libvirt;

/* The ops of a driver kind, or NULL. */
const struct sd_drv_ops *sd_drv_ops_for(enum sd_driver_kind k);

#endif
