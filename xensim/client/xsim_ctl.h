/* xsim_ctl.h - libxensim-client: the client of xensim's control socket, for
 * the xensim CLI and dom0 tools (shadowd's xensim driver). This header is the
 * library's whole contract.
 *
 * The socket is <dir>/ctl.sock, where <dir> is the sim's run directory
 * (XENSIM_DIR). Only host (dom0) processes reach it: it is the sim's stand-in
 * for the domctl hypercalls libxl makes. The protocol is ../proto/ctl_proto.h,
 * framed as ../proto/msg.h says; the types callers see (struct ctl_dominfo,
 * enum dom_state, enum dom_shutdown_reason) are defined there.
 *
 * The library:
 *  - never logs and never exits: every call returns 0 or -1 with errno (the
 *    daemon's own errno for a refused request, ECONNRESET if the daemon went
 *    away, EPROTO for a reply that breaks the protocol), and keeps a message an
 *    operator can act on for xsim_ctl_error();
 *  - never owns an event loop: each call is one request and its reply, made
 *    synchronously on a blocking socket; xsim_ctl_fd() hands the caller the
 *    socket to poll for the daemon going away (POLLHUP/POLLIN at EOF);
 *  - copies and checks every reply before the caller sees it (sizes exact,
 *    strings NUL-terminated);
 *  - is not thread-safe: one handle, one thread at a time (open one per thread).
 *
 * Build: build/lib/libxensim-client.a; compile with -Ixensim/client -Ixensim/proto.
 */
#ifndef XSIM_CTL_H
#define XSIM_CTL_H

#include "ctl_proto.h"

#include <stddef.h>

struct xsim_ctl;

/* Connect to <dir>/ctl.sock. NULL with errno on failure (ENOENT, ECONNREFUSED:
 * no daemon there). */
struct xsim_ctl *xsim_ctl_open(const char *dir);
/* Close the socket and free the handle; safe on NULL. */
void xsim_ctl_close(struct xsim_ctl *c);
/* The message for the last failed call: the daemon's own, or what went wrong
 * on the way ("" if the last call succeeded). Valid until the next call. */
const char *xsim_ctl_error(const struct xsim_ctl *c);
/* The connected socket, for poll() only: the caller must not read, write or
 * close it. It stays the same for the handle's life. */
int xsim_ctl_fd(const struct xsim_ctl *c);

/* Start a domain running argv (argv[0] looked up in PATH by the daemon) in a
 * new process group, with exactly envp (may be NULL) plus the variables that
 * point the Xen libraries at the sim, in cwd. name NULL or "" means
 * "domain-<domid>"; at most CTL_NAME_MAX - 1 bytes. fds are the domain's
 * stdin, stdout and stderr: passed with SCM_RIGHTS, so the caller keeps and
 * closes its own. On success *out describes the new domain. */
int xsim_ctl_create(struct xsim_ctl *c, const char *name, char *const *argv, char *const *envp,
                    const char *cwd, const int fds[3], struct ctl_dominfo *out);
/* Requests on one domain fail with ESRCH (no such domain), EINVAL (not in a
 * state that allows it) or EPERM (dom0, which always exists). */

/* Kill the domain's processes, free everything it held, fire @releaseDomain. */
int xsim_ctl_destroy(struct xsim_ctl *c, unsigned domid);
/* SIGSTOP / SIGCONT the domain's process group. */
int xsim_ctl_pause(struct xsim_ctl *c, unsigned domid);
int xsim_ctl_unpause(struct xsim_ctl *c, unsigned domid);
/* Stop the domain with reason (enum dom_shutdown_reason); it stays listed in
 * DOM_SHUTDOWN until destroyed. */
int xsim_ctl_shutdown(struct xsim_ctl *c, unsigned domid, unsigned reason);
int xsim_ctl_info(struct xsim_ctl *c, unsigned domid, struct ctl_dominfo *out);
/* Every domain, dom0 first. *out is malloc'ed (never NULL on success, even
 * for n == 0); the caller frees it. */
int xsim_ctl_list(struct xsim_ctl *c, struct ctl_dominfo **out, unsigned *n);
/* The daemon's run directory and where the drop-in Xen libraries are. */
int xsim_ctl_paths(struct xsim_ctl *c, struct ctl_paths *out);
/* Ask the daemon to destroy every domain and exit; returns once it has the
 * request (the socket then reaches EOF). */
int xsim_ctl_stop(struct xsim_ctl *c);
/* Resolve dom, a domid or a domain name, to a domid (a name costs a list).
 * ESRCH: no domain of that name. */
int xsim_ctl_lookup(struct xsim_ctl *c, const char *dom, unsigned *domid);

#endif
