/* sn_ring.h - one stream's sndif transport to one backend: its request
 * ring and event channel, its event page and event channel (sndif.h
 * version 2), and the shared buffer of an open stream with its grant
 * directory. Requests go out with an id that indexes a table of what is
 * outstanding; every response and every event is copied out of shared memory
 * and checked (id, operation, status; event numbering and type) before
 * anything acts on it. A transport is never reused: a new backend gets a new
 * one, granted to its domain.
 */
#ifndef SN_RING_H
#define SN_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xen_barriers.h" /* before any xen/io header */

#include <xen/grant_table.h>
#include <xen/io/sndif.h>
#include <xenevtchn.h>
#include <xengnttab.h>

#define SN_PAGE      4096u
#define SN_RING_SIZE __CONST_RING_SIZE(xen_sndif, SN_PAGE)
/* Buffer pages one stream may share: the card's largest buffer-size. */
#define SN_MAX_BUF_PAGES ((16u << 20) / SN_PAGE)
/* Grant refs one directory page holds (sndif.h: next-page ref, then refs). */
#define SN_DIR_REFS      ((SN_PAGE - sizeof(grant_ref_t)) / sizeof(grant_ref_t))
#define SN_MAX_DIR_PAGES ((SN_MAX_BUF_PAGES + SN_DIR_REFS - 1) / SN_DIR_REFS)

struct sn_req {
    bool busy;
    uint8_t op;
    uint64_t since; /* ms, when issued */
    uint64_t tag;   /* the caller's */
};

struct sn_ring {
    xengntshr_handle *gs;
    xenevtchn_handle *xce;
    uint32_t domid;
    void *sring;
    uint32_t ring_ref;
    xen_sndif_front_ring_t fr;
    evtchn_port_t port;
    bool bound;
    struct xensnd_event_page *evt;
    uint32_t evt_ref;
    evtchn_port_t evt_port;
    bool evt_bound;
    uint32_t evt_cons;   /* events consumed (in_cons, kept here: the page is shared) */
    uint16_t evt_expect; /* the next event's id (0 after each OPEN) */

    struct sn_req req[SN_RING_SIZE]; /* by id */
    unsigned nbusy;
    unsigned nbusy_other; /* ... of them not WRITE */
    bool push;            /* requests written, not yet pushed */
    bool quiet_wanted;    /* sn_ring_quiet */
    bool quiet;           /* rsp_event set out of reach: WRITE answers notify nothing */

    /* The open stream's buffer (OPEN .. the transport's end). */
    uint8_t *buf;
    uint32_t buf_sz;
    unsigned buf_pages;
    uint32_t *buf_refs;
    void *dir;
    unsigned dir_pages;
    uint32_t dir_refs[SN_MAX_DIR_PAGES];
};

/* What sn_ring_harvest hands over: a valid response to a request. */
typedef void sn_rsp_fn(void *arg, uint64_t tag, const struct xensnd_resp *rsp);
/* ... and sn_ring_events: a CUR_POS event, in order. */
typedef void sn_evt_fn(void *arg, uint64_t position);

/* Share the ring page and the event page with domid, bind two unbound ports.
 * 0 or -1 (errno; everything undone). */
int sn_ring_setup(struct sn_ring *r, xengntshr_handle *gs, xenevtchn_handle *xce, uint32_t domid);
/* Unbind, unshare everything (the buffer too). Safe on a zeroed or
 * half-set-up transport. */
void sn_ring_teardown(struct sn_ring *r);

/* Share a buffer of buf_sz octets and its grant directory (replacing any
 * buffer shared before). The directory's first ref, for OPEN, or -1
 * (errno). */
int sn_ring_buffer(struct sn_ring *r, uint32_t buf_sz, uint32_t *dir_ref);

/* Room for a request now. */
bool sn_ring_room(const struct sn_ring *r);
/* Queue req (its id is set here) with the caller's tag; pushed by
 * sn_ring_push. The request's id, or -1 (EBUSY: no room). */
int sn_ring_issue(struct sn_ring *r, struct xensnd_req *req, uint64_t tag, uint64_t now);
/* Publish queued requests, notify if the backend asked. */
void sn_ring_push(struct sn_ring *r);

/* Quiet (on): while only WRITEs are outstanding, the backend is not asked
 * to notify their answers (rsp_event set out of reach); they are taken at the
 * next turn something else brings (a position event, the program's audio).
 * Any other request asks for its answer at once. Off: every answer notifies.
 * Takes effect at the next sn_ring_harvest. */
void sn_ring_quiet(struct sn_ring *r, bool on);

/* Consume responses: each valid one goes to fn (its request retired first).
 * 1 if any were consumed, 0 if none, -1 with why if one is invalid (nothing
 * after it is looked at: the caller ends the connection). */
int sn_ring_harvest(struct sn_ring *r, sn_rsp_fn *fn, void *arg, char *why, size_t len);
/* Consume events: each CUR_POS in its order goes to fn. 1, 0, or -1 with
 * why (a broken index, an event out of order or of an unknown type). */
int sn_ring_events(struct sn_ring *r, sn_evt_fn *fn, void *arg, char *why, size_t len);
/* Drop the events there are now and expect id 0 next (a new OPEN). */
void sn_ring_events_reset(struct sn_ring *r);
/* Ack the pending port the readable fd has (one handle for every stream's
 * ports; call once per POLLIN). */
void sn_ring_ack(xenevtchn_handle *xce);

/* The issue time of the oldest outstanding request; false if none. */
bool sn_ring_oldest(const struct sn_ring *r, uint64_t *since);

#endif
