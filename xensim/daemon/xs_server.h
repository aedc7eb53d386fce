/* xs_server.h - xensim's xenstore: a store that speaks the xenstore wire
 * protocol (xen/io/xs_wire.h) on one unix stream socket per domain. A client
 * is the domain whose socket it connected to; dom0's clients are privileged.
 * Semantics follow Xen 4.17's C xenstored (docs/misc/xenstore.txt): node
 * permissions, transactions, watches, special watches, quotas.
 */
#ifndef XSIM_XS_SERVER_H
#define XSIM_XS_SERVER_H

#include "evloop.h"

/* Set up an empty store (/, /local, /local/domain, /tool owned by dom0). */
int xs_server_init(struct evloop *l);
/* Close every connection and free the store. */
void xs_server_fini(void);

/* Listen on a new unix stream socket at path; every client accepted there
 * acts as domid. Returns 0 or -1 with errno. */
int xs_server_listen(unsigned domid, const char *path);

/* The toolstack's part of creating a domain (done by the daemon, as libxl
 * does): /local/domain/<id> with libxl's layout and permissions, its name and
 * domid keys; the domain becomes "introduced" and @introduceDomain fires. */
int xs_server_domain_introduce(unsigned domid, const char *name);

/* The domain shut down (poweroff, crash, watchdog) but still exists:
 * @releaseDomain fires, as xenstored does on VIRQ_DOM_EXC. */
void xs_server_domain_shutdown(unsigned domid);

/* The domain is gone: close its connections and socket, drop its watches
 * and transactions, remove /local/domain/<id> (the toolstack's job in Xen),
 * forget permissions naming it so a later domain with the same id gets no
 * access through them, and fire @releaseDomain. */
void xs_server_domain_destroyed(unsigned domid);

#endif
