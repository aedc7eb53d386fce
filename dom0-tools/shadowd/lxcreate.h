/* lxcreate.h - the libxl driver's create, run in a child process of
 * shadowd-priv. libxl_domain_create_new does its synchronous part (the
 * domain builder loading the kernel: 1.6-4.4 s on Xen in QEMU) inside the
 * call, whatever its ao_how; in shadowd-priv's one loop that held every
 * other request - and shadowd, which waits for each reply - so a failure
 * during a standby's background create was acted on only once the create
 * returned. The child has its own libxl ctx (libxl_postfork_child_noexec
 * first, as libxl_event.h asks of a child that does not exec), creates and
 * unpauses the domain, writes one struct sd_lxc_result down a pipe, adds
 * the config's late vifs and exits. The parent watches the pipe in its poll
 * loop and reaps the child with waitpid (its libxl ctx must be in
 * libxl_sigchld_owner_libxl_always_selective_reap mode, which leaves other
 * children to us). */
#ifndef SD_LXCREATE_H
#define SD_LXCREATE_H

#include "conf.h"

#include <libxl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SD_LXC_MAX_MS 300000u /* a child still running after this is killed */

/* What the child reports, once: rc 0 and domid (created and unpaused), or
 * -1 and a message. */
struct sd_lxc_result {
    int32_t rc;
    uint32_t domid;
    char err[120];
};

struct sd_lxc {
    pid_t pid;
    int fd;        /* the pipe's read end; -1 once the child closed it */
    bool reported; /* its result (or a failure of ours in its place) given out */
    bool killed;   /* past SD_LXC_MAX_MS */
    uint64_t start_ms;
};

/* Fork a child that creates domain d under name (boost: at d's
 * boot-weight). 0, or -1 with a message (no child). */
int sd_lxc_start(libxl_ctx *parent, const struct sd_domconf *d, const char *name, bool boost,
                 struct sd_lxc *c, char *err, size_t errlen);

#define SD_LXC_RESULT 1 /* *res holds the create's result (given once) */
#define SD_LXC_OVER   2 /* the child is reaped and its pipe closed: c is free */

/* Look at the child (after poll, or at any time): SD_LXC_* bits. A child
 * that exits or is killed without a result gives a failure result first. */
int sd_lxc_poll(struct sd_lxc *c, struct sd_lxc_result *res, uint64_t now_ms);

/* How long the parent's poll may sleep for this child: -1 (its pipe will
 * wake it) or the ms until its deadline, or until it can be reaped. */
int sd_lxc_timeout(const struct sd_lxc *c, uint64_t now_ms);

/* shadowd-priv is closing: kill and reap the child. */
void sd_lxc_abandon(struct sd_lxc *c);

#endif
