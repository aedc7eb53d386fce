/* ctl_proto.h - operations on xensim's control socket (<dir>/ctl.sock).
 *
 * Only host (dom0) processes reach this socket: it is the sim's equivalent of
 * the domctl hypercalls that libxl makes. Framing is msg.h's; every request
 * gets one reply with the same op and seq, err 0 or a positive errno, and on
 * error a NUL-terminated message as its body.
 */
#ifndef XSIM_CTL_PROTO_H
#define XSIM_CTL_PROTO_H

#include <stdint.h>

#define CTL_NAME_MAX 64 /* including the NUL */

#define XSIM_DOMID_FIRST_RESERVED 0x7FF0u /* DOMID_FIRST_RESERVED in xen/xen.h */

/* ctl_dominfo.state */
enum dom_state {
    DOM_RUNNING,
    DOM_PAUSED,
    DOM_SHUTDOWN, /* stopped with a reason, not yet destroyed (like xl's "s" state) */
    DOM_DYING,    /* being destroyed: processes killed, resources going */
};

/* ctl_dominfo.shutdown_reason, CTL_SHUTDOWN's reason: values of SHUTDOWN_* in xen/sched.h. */
enum dom_shutdown_reason {
    DOM_SHUTDOWN_POWEROFF = 0,
    DOM_SHUTDOWN_REBOOT = 1,
    DOM_SHUTDOWN_SUSPEND = 2,
    DOM_SHUTDOWN_CRASH = 3,
    DOM_SHUTDOWN_WATCHDOG = 4,
};

enum ctl_op {
    CTL_CREATE =
        1,        /* body: ctl_create + strings; fds: stdin, stdout, stderr -> reply ctl_dominfo */
    CTL_DESTROY,  /* body: uint32 domid -> empty */
    CTL_PAUSE,    /* body: uint32 domid */
    CTL_UNPAUSE,  /* body: uint32 domid */
    CTL_SHUTDOWN, /* body: uint32 domid, uint32 reason (enum dom_shutdown_reason) */
    CTL_LIST,     /* empty -> array of ctl_dominfo, dom0 first */
    CTL_INFO,     /* body: uint32 domid -> ctl_dominfo */
    CTL_PATHS,    /* empty -> ctl_paths */
    CTL_STOP,     /* empty -> empty; then every domain is destroyed and the daemon exits */
};

/* CTL_CREATE: followed by argc argv strings, envc "K=V" strings, then the cwd,
 * each NUL-terminated. The domain gets exactly envc as its environment, plus
 * the variables that point the Xen libraries at the sim. */
struct ctl_create {
    char name[CTL_NAME_MAX]; /* empty: "domain-<domid>" */
    uint32_t argc;
    uint32_t envc;
};

struct ctl_dominfo {
    uint32_t domid;
    uint32_t state;          /* enum dom_state */
    int32_t shutdown_reason; /* enum dom_shutdown_reason, -1 while not shut down */
    int32_t pid;             /* leader of the process group, 0 when none */
    int32_t exit_status;     /* wait status of the leader, -1 while it runs */
    uint32_t pad;
    uint64_t created_ms;  /* CLOCK_MONOTONIC at creation */
    uint64_t shutdown_ms; /* CLOCK_MONOTONIC at shutdown, 0 if none */
    char name[CTL_NAME_MAX];
};

struct ctl_paths {
    char dir[256];    /* the sim's run directory */
    char simlib[256]; /* where the drop-in Xen libraries are */
};

#endif
