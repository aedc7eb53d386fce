/* sf_xenbus.h - the xenstore side every shadow frontend shares: the
 * device dir, the backend it points at (rewritten in place by the toolstack
 * on recovery), watches on shadow/generation and on the backend dir, the
 * frontend's XenbusState, and the shadow/ keys it publishes. Class-blind:
 * the class reads and writes its own protocol keys through sfx_xs().
 *
 * The device dir may be given relative to the domain's home
 * (device/vbd/51712), as xenstored resolves relative paths. */
#ifndef SF_XENBUS_H
#define SF_XENBUS_H

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

#define SFX_PATH_MAX 256

/* Event bits from sfx_events. */
#define SFX_EV_GENERATION 0x1u /* shadow/generation may have changed */
#define SFX_EV_BACKEND    0x2u /* something under the backend dir changed */
#define SFX_EV_STANDBY    0x4u /* shadow/standby may have changed */
#define SFX_EV_FENCED     0x8u /* shadow/fenced may have changed */

/* A link: the dir one connection's keys go in (fe) and its backend. The
 * device's own link has fe == dev, the device dir, and also watches its
 * shadow/generation, shadow/standby and shadow/fenced; a hot standby's link is in a slot
 * (schema.md, "The hot standby's connection"), dev == fe == the slot, and
 * watches only its backend. A promotion moves the device's link into the
 * slot: fe changes, dev (where backend and the shadow keys are) does not. */
struct sfx {
    struct xs_handle *xs;
    char dev[SFX_PATH_MAX]; /* where backend, backend-id and shadow/ are */
    char fe[SFX_PATH_MAX];  /* the connection's frontend dir: state, transport keys */
    char be[SFX_PATH_MAX];  /* its backend dir, "" until read */
    unsigned be_id;
    unsigned be_epoch; /* bumped when the backend watch moves */
    bool be_watched;
    /* A watch still to remove (sfx_name_backend), and its epoch. */
    char be_unwatch[SFX_PATH_MAX];
    unsigned unwatch_epoch;
};

/* Connect to xenstore and watch device/shadow/generation,
 * device/shadow/standby and device/shadow/fenced. 0 or -1 (errno). */
int sfx_open(struct sfx *x, const char *device);
/* A standby's link in the slot dir (device/shadow/<slot>): its own
 * connection, no watch until sfx_read_backend. 0 or -1 (errno). */
int sfx_open_link(struct sfx *x, const char *slot_dir);
/* NULL-safe on a zeroed or half-opened sfx. */
void sfx_close(struct sfx *x);

struct xs_handle *sfx_xs(const struct sfx *x);
/* The fd to poll for watch events. */
int sfx_fd(const struct sfx *x);
/* Drain pending watch events; returns SFX_EV_* bits. */
unsigned sfx_events(struct sfx *x);

/* Read backend and backend-id from the device dir (checked: an absolute
 * path of valid characters, a domid below DOMID_FIRST_RESERVED). When they
 * differ from what we had, move the backend watch there. Returns 1 if they
 * changed, 0 if not, -1 (errno) if unreadable or invalid. */
int sfx_read_backend(struct sfx *x);
/* Take be (domain be_id) as the backend now, without a round trip (a
 * promotion: the data path first). Its watch is set, and the old one
 * removed, by the next sfx_read_backend; the old one's events are stale
 * from now on. */
void sfx_name_backend(struct sfx *x, const char *be, unsigned be_id);
/* dev/backend and backend-id as sfx_read_backend checks them, without
 * moving any watch. 0 or -1 (errno). */
int sfx_peek_backend(struct sfx *x, char *be, size_t len, unsigned *be_id);
/* dev/backend alone (one round trip): 0 or -1 (errno). */
int sfx_peek_backend_path(struct sfx *x, char *be, size_t len);
/* dev/shadow/standby: the slot's name (slot-a or slot-b) in slot; 0, or -1
 * (errno: ENOENT when absent, EINVAL when not a slot's name). */
int sfx_read_standby(struct sfx *x, char *slot, size_t len);
/* The connection's dir moves (a promotion: into the slot). */
void sfx_set_link_dir(struct sfx *x, const char *fe);
/* device/shadow/generation; absent reads as 0. 0 or -1 (errno). */
int sfx_read_generation(struct sfx *x, uint64_t *gen);
/* device/shadow/fenced (schema.md; written by the toolstack, in the
 * guest's own dir: a guest that lies there harms only itself); absent reads
 * as 0. 0 or -1 (errno; EINVAL when not a decimal). */
int sfx_read_fenced(struct sfx *x, uint64_t *gen);
/* The backend's XenbusState, or -1 (errno; ENOENT when the dir is gone). */
int sfx_backend_state(struct sfx *x);
/* Our XenbusState. 0 or -1 (errno). */
int sfx_set_state(struct sfx *x, int state);
/* Write fe/key (a protocol key of the connection). */
int sfx_write(struct sfx *x, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write dev/key (one of the USK_FE_* keys: the device's, wherever its
 * connection is). */
int sfx_write_dev(struct sfx *x, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Remove fe/key; absent is fine. */
int sfx_remove(struct sfx *x, const char *key);
/* Those of keys[0..n) that are in the link dir, each a round trip, after
 * one listing of it (a key not there costs no round trip; where the
 * listing fails, every key is tried). */
void sfx_remove_present(struct sfx *x, const char *const *keys, size_t n);

#endif
