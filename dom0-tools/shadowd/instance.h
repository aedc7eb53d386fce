/* instance.h - one instance of a driver domain: a running copy of it under
 * one of its two names, in one of two roles. The serving domain (the one
 * guests' devices point at) and the warm standby (booted ahead, serving
 * nothing) are each one of these, and so is a failed domain between its
 * fencing and its destroy after a promotion; a domain's role-specific state
 * (its recovery, the standby's readiness) is the role's own (dom.h). */
#ifndef SD_INSTANCE_H
#define SD_INSTANCE_H

#include "budget.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sd_dom;
struct xs_handle;

enum sd_role {
    SD_ROLE_SERVING = 0,
    SD_ROLE_STANDBY,
    SD_ROLE_FENCED, /* a failed domain, fenced at a promotion, destroyed after (fence.c) */
};

/* The agent's heartbeat key (USK_DRV_HEARTBEAT) of the instance's domain.
 * Only changes count: values are not comparable across domains. */
struct sd_heartbeat {
    char path[96]; /* "": not watched */
    char value[40];
    bool seen;            /* changed since start_ms */
    uint64_t start_ms;    /* the domain started, or shadowd began watching it */
    uint64_t change_ms;   /* its last change */
    uint64_t interval_ms; /* between its last two changes (0: not two yet) */
};

struct sd_inst {
    struct sd_dom *dom; /* whose instance: its config, driver and names */
    enum sd_role role;
    unsigned domid;         /* 0 while none */
    unsigned watched_domid; /* watches are registered for this domid */
    struct sd_heartbeat hb;
    bool boosted; /* serving: created at boot-weight (or maybe, found running), to settle */
    struct sd_budget budget; /* restarts (serving), replacements (standby) */
    char error[200];         /* why it last failed, for status */
};

void sd_inst_init(struct sd_inst *in, struct sd_dom *d, enum sd_role role);
/* Domain names: slot 0 is the config's name, slot 1 "<name>.2". */
#define SD_STANDBY_SUFFIX ".2"
const char *sd_dom_name(const struct sd_dom *d, unsigned slot, char *buf, size_t len);
/* The name the instance's domain has (or is created under). */
const char *sd_inst_name(const struct sd_inst *in, char *buf, size_t len);
/* Read the heartbeat key: 1 if it changed (hb.value, change_ms and seen are
 * updated), 0 if not, -1 if it is absent or not a number (no sign of life). */
int sd_inst_heartbeat(struct sd_inst *in, struct xs_handle *xs, uint64_t now);

#endif
