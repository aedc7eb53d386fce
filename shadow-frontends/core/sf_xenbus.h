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

struct sfx {
    struct xs_handle *xs;
    char fe[SFX_PATH_MAX]; /* the device dir */
    char be[SFX_PATH_MAX]; /* its backend dir, "" until read */
    unsigned be_id;
    unsigned be_epoch; /* bumped when the backend watch moves */
    bool be_watched;
};

/* Connect to xenstore and watch device/shadow/generation. 0 or -1 (errno). */
int sfx_open(struct sfx *x, const char *device);
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
/* device/shadow/generation; absent reads as 0. 0 or -1 (errno). */
int sfx_read_generation(struct sfx *x, uint64_t *gen);
/* The backend's XenbusState, or -1 (errno; ENOENT when the dir is gone). */
int sfx_backend_state(struct sfx *x);
/* Our XenbusState. 0 or -1 (errno). */
int sfx_set_state(struct sfx *x, int state);
/* Write device/key (one of the USK_FE_* keys, or a protocol key). */
int sfx_write(struct sfx *x, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Remove device/key; absent is fine. */
int sfx_remove(struct sfx *x, const char *key);

#endif
