/* privcheck.h - what shadowd-priv lets a well-formed request (privmsg.h) do:
 * a name must be a configured domain's (NAME) or its standby's (NAME.2), of
 * the driver kind the request names; a domain may be destroyed, paused or
 * crashed only if it is one of those domains. shadowd-priv reads the config
 * itself: nothing here comes from shadowd but the name and the domid. */
#ifndef SD_PRIVCHECK_H
#define SD_PRIVCHECK_H

#include "conf.h"
#include "drv.h"

#include <stdbool.h>
#include <stddef.h>

#define SD_PRIVOWN_MAX 64

/* Domids shadowd-priv found or created under a configured name in this run:
 * a domain the driver can no longer name (libvirt forgets a stopped
 * domain's name with its ID) is still known to be ours. */
struct sd_privown {
    struct {
        enum sd_driver_kind kind;
        unsigned domid;
    } v[SD_PRIVOWN_MAX];
    unsigned n, next;
};

void sd_privown_add(struct sd_privown *o, enum sd_driver_kind k, unsigned domid);
void sd_privown_del(struct sd_privown *o, enum sd_driver_kind k, unsigned domid);
bool sd_privown_has(const struct sd_privown *o, enum sd_driver_kind k, unsigned domid);

/* The configured domain of kind k called name, or whose standby is called
 * name (NAME.2); NULL with the reason in why. */
const struct sd_domconf *sd_privchk_name(const struct sd_conf *c, enum sd_driver_kind k,
                                         const char *name, char *why, size_t len);

/* CREATE of domain dom under name: the configured domain, or NULL with why. */
const struct sd_domconf *sd_privchk_create(const struct sd_conf *c, enum sd_driver_kind k,
                                           const char *dom, const char *name, char *why,
                                           size_t len);

/* May domid, in state st as its driver reports it, be destroyed (destroy)
 * or paused / crashed (!destroy)? Yes if its name is a configured domain's
 * or its standby's, or it is in o; for a destroy also if it is already
 * shut down or dying and the driver has no name for it. 0, or -1 with why. */
int sd_privchk_owned(const struct sd_conf *c, const struct sd_privown *o, enum sd_driver_kind k,
                     unsigned domid, const struct sd_domstat *st, bool destroy, char *why,
                     size_t len);

#endif
