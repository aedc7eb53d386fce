/* hyp.h - xensim's grant tables and event channels, served to the drop-in
 * libxengnttab.so.1 / libxenevtchn.so.1 over one SOCK_SEQPACKET socket per
 * domain (framing in msg.h, operations in hyp_proto.h). A client is the
 * domain whose socket it connected to.
 */
#ifndef XSIM_HYP_H
#define XSIM_HYP_H

#include "evloop.h"

int hyp_server_init(struct evloop *l);
void hyp_server_fini(void);

/* Listen on path; clients accepted there act as domid. */
int hyp_server_listen(unsigned domid, const char *path);

/* The domain stopped running (shutdown or destroy begins): from now on its
 * processes dying is the domain dying, and a dead domain's kernel performs no
 * unmap-notify, so none fires for its handles (as on real Xen, peers learn of
 * it from xenstore). Called before its processes are killed. */
void hyp_domain_dying(unsigned domid);

/* The domain is destroyed: close its connections and socket, revoke the
 * grants it shared (pages already mapped by others stay valid until they
 * unmap, as in Xen), release its mappings, and close its event channel ports
 * (an interdomain peer's port becomes unbound; no event is sent). */
void hyp_domain_destroyed(unsigned domid);

#endif
