/* xs_domain.h - the store's side of a domain's life: introduction,
 * release and destruction (xenstored_domain.c), shared by the wire
 * handlers and the xs_server.h API. */
#ifndef XSIM_XS_DOMAIN_H
#define XSIM_XS_DOMAIN_H

#include <stdbool.h>

/* INTRODUCE: the domain becomes introduced and @introduceDomain fires; an
 * introduced domain's connections lose their watches and transactions
 * instead. Returns 0 or EINVAL (no such domain). */
int xs_domain_introduce(unsigned domid);
/* What xenstored does when a domain's connection goes (RELEASE, or the
 * domain dying): close its connections, delete the nodes it owns, drop it
 * from the special nodes' perms and forget it, so that perms naming it
 * grant nothing to a later domain with its domid. @releaseDomain is the
 * caller's to fire. */
void xs_domain_gone(unsigned domid);
/* RELEASEd and not introduced again: its clients are refused. */
bool xs_domain_released(unsigned domid);
void xs_domain_set_released(unsigned domid, bool released);

#endif
