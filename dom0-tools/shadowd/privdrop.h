/* privdrop.h - what shadowd's unprivileged part gives up once shadowd-priv
 * is running and the xenstore connection, the sockets and the state dir are
 * open: started as root, it becomes the configured `user` (default
 * `shadowd` if that account exists, else `nobody`), with that user's group
 * only, no capabilities (an empty bounding set) and no_new_privs; the state
 * dir and its files are given to the user first. */
#ifndef SD_PRIVDROP_H
#define SD_PRIVDROP_H

#include "conf.h"

/* 0, or -1 (logged): shadowd must not go on. state_fd: the open state dir. */
int sd_privdrop(const struct sd_conf *c, int state_fd);

#endif
