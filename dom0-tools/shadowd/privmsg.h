/* privmsg.h - the messages between shadowd (unprivileged: xenstore, the
 * control and metrics sockets) and shadowd-priv (the domain drivers: libxl,
 * libvirt, the simulator's control socket), over a SOCK_SEQPACKET
 * socketpair. Every message is one struct sd_privmsg, exactly; a request
 * names a driver kind and a domid or a domain name, never a file or a
 * config. See dom0-tools/README.md, "Privilege separation".
 *
 *   shadowd -> shadowd-priv (each answered by one REPLY with its seq)
 *     FIND     kind, name              the domain called name (NAME or NAME.2
 *                                      of a configured domain): domid
 *     INFO     kind, domid             its state: st
 *     CREATE   kind, dom, name, flags  create configured domain dom under
 *                                      name (dom or dom.2), with F_BOOST the
 *                                      one to serve: rc DONE + domid, or
 *                                      PENDING and a DONE later
 *     DESTROY  kind, domid             rc DONE, or PENDING and a DONE later
 *     PAUSE, CRASH  kind, domid        fault injection; PAUSE also holds a
 *                                      standby through a recovery
 *     WATCH, UNWATCH kind, domid       CHANGED notifications for domid
 *     LOOK     kind, nlook, look[].domid   the states of several domains in
 *                                      one round trip (no names): look[].run,
 *                                      .reason, .shutdown_ms in the REPLY
 *     SETTLE   kind, domid             domid (created with F_BOOST) serves:
 *                                      its config's scheduler weight
 *     UNPAUSE  kind, domid             let a held standby run again
 *   shadowd-priv -> shadowd
 *     HELLO    rc, err                 first message: the drivers are open
 *     REPLY    seq, rc, err_no, domid, st, err (LOOK: nlook, look[])
 *     DONE     seq (the CREATE's or DESTROY's), op, rc, domid, err
 *     CHANGED  kind, domid             look at domid again
 */
#ifndef SD_PRIVMSG_H
#define SD_PRIVMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SD_PRIV_NAME    80      /* a domain's name, or its standby's (NAME.2), NUL-terminated */
#define SD_PRIV_ERR     256     /* a message, NUL-terminated */
#define SD_PRIV_DOMMAX  0x7fefu /* DOMID_FIRST_RESERVED - 1: the highest real domid */
#define SD_PRIV_LOOKMAX 16      /* domains one LOOK asks about */
#define SD_PRIV_F_BOOST 1u      /* CREATE: the domain to serve, booted at boot-weight */

enum sd_priv_type {
    SD_PRIV_FIND = 1,
    SD_PRIV_INFO,
    SD_PRIV_CREATE,
    SD_PRIV_DESTROY,
    SD_PRIV_PAUSE,
    SD_PRIV_CRASH,
    SD_PRIV_WATCH,
    SD_PRIV_UNWATCH,
    SD_PRIV_LOOK,
    SD_PRIV_SETTLE,
    SD_PRIV_UNPAUSE,
    SD_PRIV_HELLO,
    SD_PRIV_REPLY,
    SD_PRIV_DONE,
    SD_PRIV_CHANGED,
    SD_PRIV_TYPES,
};

/* A domain's state (INFO's reply): struct sd_domstat with fixed-size fields. */
struct sd_privstat {
    uint32_t run;   /* enum sd_run */
    int32_t reason; /* SD_SHUT_* or -1 */
    uint64_t shutdown_ms;
    char name[64];
};

/* One domain of a LOOK: the request sets domid alone, the reply the rest. */
struct sd_privlook {
    uint32_t domid;
    uint32_t run;   /* enum sd_run */
    int32_t reason; /* SD_SHUT_* or -1 */
    uint32_t zero;  /* must be 0 */
    uint64_t shutdown_ms;
};

struct sd_privmsg {
    uint32_t type; /* enum sd_priv_type */
    uint32_t seq;  /* chosen by shadowd per request; REPLY and DONE carry the request's */
    uint32_t kind; /* enum sd_driver_kind */
    uint32_t domid;
    int32_t rc;     /* REPLY: -1, SD_DRV_DONE or SD_DRV_PENDING; DONE, HELLO: 0 or -1 */
    int32_t err_no; /* REPLY of a failure: its errno (ENOENT: FIND found none) */
    uint32_t op;    /* DONE: enum sd_drv_op */
    uint32_t flags; /* CREATE: SD_PRIV_F_*; else 0 */
    char dom[SD_PRIV_NAME];
    char name[SD_PRIV_NAME];
    struct sd_privstat st;
    char err[SD_PRIV_ERR];
    uint32_t nlook; /* LOOK and its REPLY: how many of look[] count; else 0 */
    uint32_t zero2; /* must be 0 */
    struct sd_privlook look[SD_PRIV_LOOKMAX];
};

/* Whether a message of len bytes (as recv returned it) is well formed for
 * its direction: exactly one struct, a type that direction may send, every
 * string NUL-terminated, the kind a driver kind, domids in 1..SD_PRIV_DOMMAX,
 * names valid domain names, fields a type does not use zero. Returns 0, or
 * -1 with the reason in why. */
int sd_privmsg_check(const struct sd_privmsg *m, ssize_t len, bool from_priv, char *why,
                     size_t whylen);

/* The word for a type, for messages ("destroy"); "?" if unknown. */
const char *sd_privmsg_type_name(uint32_t type);

#endif
