/* ctl_server.h - the daemon's control socket: domain operations for the host. */
#ifndef XSIM_CTL_SERVER_H
#define XSIM_CTL_SERVER_H

#include "evloop.h"

/* Listen on path (mode 0600). CTL_STOP makes the loop stop after its reply. */
int ctl_server_init(struct evloop *l, const char *path);
void ctl_server_fini(void);

#endif
