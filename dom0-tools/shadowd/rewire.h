/* rewire.h - pointing a guest device at a new backend domain (rewire.c). */
#ifndef SD_REWIRE_H
#define SD_REWIRE_H

#include <stdbool.h>
#include <xenstore.h>

/* A guest's absurd FE/shadow/generation is not ours to follow. */
#define SD_GEN_MAX (1ull << 53)

struct sd_dom;
struct sd_dev;

/* The backend dir be of v in domain drv, as a rewire writes it, with
 * `frontend` = front (FE, or a slot for a hot standby), inside t. 0 or -1. */
int sd_rewire_write_be(struct xs_handle *xs, const struct sd_dev *v, unsigned drv,
                       xs_transaction_t t, const char *be, const char *front);
/* Permissions n<owner>,r<reader> on dir and every node below it (bounded);
 * with is_fe, dir is a frontend dir and its slots are left alone. 0 or -1. */
int sd_rewire_chmod(struct xs_handle *xs, xs_transaction_t t, const char *dir, unsigned owner,
                    unsigned reader, bool is_fe);

/* Rewire v from its old backend to domain newdrv on connection xs -
 * switching it to the connection it holds, if newdrv is the hot standby it
 * holds one to (v->hot_switched says so when that one was Connected). With
 * maybe_done (a resumed recovery, a retry) a device pointing at newdrv
 * already is left alone. 0, 1 (already done), or -1. Touches only v (and
 * reads d): devices are rewired in parallel (xspool.h). */
int sd_rewire_dev(struct xs_handle *xs, struct sd_dom *d, struct sd_dev *v, unsigned newdrv,
                  bool maybe_done);
/* After a switch (v->chmod_pending): FE readable by newdrv and no longer by
 * the failed domain. Left out of the switch's transaction and out of the
 * recovery: a round trip or two per node of FE that no guest waits for
 * (sd_rewire_perms_tick). */
void sd_rewire_switched_perms(struct xs_handle *xs, struct sd_dom *d, struct sd_dev *v,
                              unsigned newdrv);
/* While the domain is up: the permissions switched devices still wait for,
 * a chunk a loop turn; sd_rewire_perms_due says when there are some. */
void sd_rewire_perms_tick(struct sd_dom *d);
bool sd_rewire_perms_due(const struct sd_dom *d);
/* Has v reconnected to newdrv (in the dir newdrv's backend names)? */
bool sd_rewire_reconnected(struct sd_dom *d, struct sd_dev *v, unsigned newdrv);

#endif
