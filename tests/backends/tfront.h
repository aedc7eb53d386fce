/* tfront.h - a minimal conforming blkif frontend for tests, over Debian's
 * libxenstore, libxengnttab (gntshr) and libxenevtchn: the xenbus handshake
 * (one or more queues, multi-page rings, persistent grants), requests built
 * from a pool of granted pages, and raw access to the ring for hostile
 * tests. Single-threaded; every wait is bounded.
 */
#ifndef TFRONT_H
#define TFRONT_H

#include "xen_barriers.h"

#include <stdbool.h>
#include <stdint.h>
#include <xen/io/blkif.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

#define TF_MAX_QUEUES   4u
#define TF_MAX_ORDER    5u   /* one above blkback's limit, to test the refusal */
#define TF_DATA_PAGES   256u /* granted data pages, reused by every request */
#define TF_IND_PAGES    8u   /* granted indirect-segment pages */
#define TF_MAX_REQ_SEGS 256u
#define TF_SECTOR       512u
#define TF_PAGE         4096u

struct tf_opts {
    unsigned queues;      /* 1: top-level keys; more: queue-N/ */
    unsigned order;       /* ring-page-order */
    bool write_order;     /* write ring-page-order even when 0 (ring-ref0) */
    bool persistent;      /* feature-persistent=1 */
    bool indirect;        /* use indirect requests when the backend offers them */
    unsigned seg_first;   /* sectors of a page each segment uses: first.. */
    unsigned seg_count;   /* ..first+count-1 (default 0..7) */
    const char *protocol; /* NULL: not written (native) */
    unsigned timeout_ms;  /* for every wait */
    bool bogus_ring_ref;  /* hostile: publish a ring-ref the backend cannot map */
};

struct tf_queue {
    void *ring;
    uint32_t ring_refs[1u << TF_MAX_ORDER];
    blkif_front_ring_t fr;
    evtchn_port_t port;
    bool bound;
};

struct tf {
    struct xs_handle *xs;
    xengntshr_handle *gs;
    xenevtchn_handle *xce;
    char fe[256], be[256];
    unsigned be_domid;
    struct tf_opts o;

    /* What the backend offers. */
    uint64_t sectors;
    unsigned max_indirect, max_order, max_queues;
    bool be_persistent, be_flush, be_barrier, be_discard;

    /* The connection. */
    bool connected;
    unsigned nq;
    struct tf_queue q[TF_MAX_QUEUES];
    unsigned char *data; /* TF_DATA_PAGES pages */
    uint32_t data_refs[TF_DATA_PAGES];
    unsigned char *ind; /* TF_IND_PAGES pages */
    uint32_t ind_refs[TF_IND_PAGES];
    uint64_t next_id;
    char err[512]; /* the last failure, for messages */
};

void tf_default_opts(struct tf_opts *o);

/* Open the frontend dir fe: reads backend and backend-id. NULL with a message on stderr. */
struct tf *tf_open(const char *fe);
void tf_free(struct tf *t); /* releases the connection's resources; writes nothing */

/* Handshake: wait for the backend's InitWait, share rings and pages, write
 * our keys, Initialised, wait for Connected, Connected. 0 or -1 (t->err). */
int tf_connect(struct tf *t, const struct tf_opts *o);
/* Frontend Initialising, wait for the backend's InitWait, drop the old
 * connection, tf_connect again with the same options. */
int tf_reconnect(struct tf *t);
/* Closing, wait for the backend's Closed, Closed. */
int tf_close(struct tf *t);
/* Release the ring, pages and ports of the connection (no xenstore writes). */
void tf_drop(struct tf *t);

/* Wait until dir/state is one of the states in mask (1 << state). Returns the state, or -1. */
int tf_wait_state(struct tf *t, const char *dir, unsigned mask, unsigned timeout_ms);
int tf_write_state(struct tf *t, int state);

/* Transfers through the page pool. op: BLKIF_OP_READ or BLKIF_OP_WRITE. For
 * a write, buf is the data; for a read, it receives it. 0, or -1 (t->err). */
int tf_rw(struct tf *t, int op, uint64_t sector, uint64_t nsect, void *buf);
/* A request without data (flush, barrier): its status, or -100 on no answer. */
int tf_simple(struct tf *t, int op);
/* A discard: its status, or -100. */
int tf_discard(struct tf *t, uint64_t sector, uint64_t nsect);

/* Raw ring access. */
void tf_push(struct tf *t, unsigned qi, const blkif_request_t *req);
/* Next response on queue qi within timeout_ms: 1, 0 on timeout, -1 on a broken ring. */
int tf_next_response(struct tf *t, unsigned qi, unsigned timeout_ms, blkif_response_t *rsp);
/* Submit one request and wait for its answer; checks the echoed id. Status or -100. */
int tf_roundtrip(struct tf *t, unsigned qi, blkif_request_t *req);

/* The deterministic test pattern: nsect sectors from sector, for seed. */
void tf_pattern(void *buf, uint64_t sector, uint64_t nsect, uint64_t seed);

#endif
