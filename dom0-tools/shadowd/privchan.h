/* privchan.h - shadowd's end of the channel to shadowd-priv, the privileged
 * part that holds the domain drivers (privd.c, messages in privmsg.h):
 * starting it, one request and its reply at a time, and the notifications
 * (an asynchronous create or destroy done, a domain changed) handed to the
 * driver hooks from the poll loop. A channel whose other end is gone, or
 * that sent something malformed, is lost: shadowd then exits (its unit
 * restarts both parts). */
#ifndef SD_PRIVCHAN_H
#define SD_PRIVCHAN_H

#include "drv.h"
#include "privmsg.h"

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

struct sd_privchan;

/* The shadowd-priv binary: next to this one (/proc/self/exe). 0 or -1 with err. */
int sd_privchan_path(char *buf, size_t len, char *err, size_t errlen);

/* Fork and exec shadowd-priv for the config at conf_path, and wait for its
 * hello (its drivers are open). hooks get the notifications. NULL with err. */
struct sd_privchan *sd_privchan_start(const char *conf_path, const struct sd_drv_hooks *hooks,
                                      char *err, size_t errlen);
/* Close the channel (shadowd-priv exits on it) and reap shadowd-priv. */
void sd_privchan_close(struct sd_privchan *ch);
int sd_privchan_pid(const struct sd_privchan *ch);

/* Send req (its seq is set here) and wait for its reply in *rep. 0, or -1
 * with err if the channel is lost. A reply of rc SD_DRV_PENDING makes arg
 * the one done() gets for it. */
int sd_privchan_call(struct sd_privchan *ch, struct sd_privmsg *req, struct sd_privmsg *rep,
                     void *arg, char *err, size_t errlen);

/* The loop: the channel's fd in *p (timeout 0 if notifications wait);
 * after poll, the notifications go to the hooks. */
void sd_privchan_prepoll(struct sd_privchan *ch, struct pollfd *p, int *timeout_ms);
void sd_privchan_postpoll(struct sd_privchan *ch, const struct pollfd *p);

/* Lost? Then why, with shadowd-priv's exit status if it has one. */
bool sd_privchan_lost(struct sd_privchan *ch, char *why, size_t len);

#endif
