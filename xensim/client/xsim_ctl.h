/* ctl_client.h - client of xensim's control socket, for the CLI and dom0 tools. */
#ifndef XSIM_CTL_CLIENT_H
#define XSIM_CTL_CLIENT_H

#include "ctl_proto.h"

#include <stddef.h>

struct xsim_ctl;

/* Connect to <dir>/ctl.sock. NULL with errno on failure. */
struct xsim_ctl *xsim_ctl_open(const char *dir);
void xsim_ctl_close(struct xsim_ctl *c);
/* The daemon's message for the last failed call ("" if none). */
const char *xsim_ctl_error(const struct xsim_ctl *c);

/* All return 0, or -1 with errno (the daemon's errno for refused requests). */
int xsim_ctl_create(struct xsim_ctl *c, const char *name, char *const *argv, char *const *envp,
                    const char *cwd, const int fds[3], struct ctl_dominfo *out);
int xsim_ctl_destroy(struct xsim_ctl *c, unsigned domid);
int xsim_ctl_pause(struct xsim_ctl *c, unsigned domid);
int xsim_ctl_unpause(struct xsim_ctl *c, unsigned domid);
int xsim_ctl_shutdown(struct xsim_ctl *c, unsigned domid, unsigned reason);
int xsim_ctl_info(struct xsim_ctl *c, unsigned domid, struct ctl_dominfo *out);
/* *out is malloc'ed; free it. */
int xsim_ctl_list(struct xsim_ctl *c, struct ctl_dominfo **out, unsigned *n);
int xsim_ctl_paths(struct xsim_ctl *c, struct ctl_paths *out);
int xsim_ctl_stop(struct xsim_ctl *c);
/* Resolve a domid or a domain name. */
int xsim_ctl_lookup(struct xsim_ctl *c, const char *dom, unsigned *domid);

#endif
