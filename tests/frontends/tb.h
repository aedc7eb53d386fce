/* tb.h - testback: a small conforming blkif backend for the shadow
 * blkfront's tests. It serves a file through the standard protocol
 * (xen/io/blkif.h: single or multi-page ring, direct and indirect segments,
 * persistent grants, flush, barrier, discard) and can misbehave on purpose:
 * a volatile write cache lost on kill, the faults of the inject key
 * (xenstore-schema/schema.md), and a seeded HOSTILE mode whose every act is
 * a protocol violation the frontend can detect. Test code; not shipped. */
#ifndef TB_H
#define TB_H

#include "xen_barriers.h" /* before blk_xen.h: the ring barriers for both ends */
#include "blk_xen.h"

#include <stdbool.h>
#include <stdint.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

enum tb_cache {
    TB_CACHE_NONE = 0,  /* no cache of ours: no flush feature (the page cache outlives us) */
    TB_CACHE_WRITEBACK, /* page cache; fdatasync on flush */
    TB_CACHE_VOLATILE,  /* held in this process until a flush: lost on kill */
};

struct tb_opts {
    const char *backend; /* backend dir */
    const char *file;    /* overrides BE/params */
    enum tb_cache cache;
    bool cache_set;
    unsigned sector_size;
    unsigned max_ring_order;
    unsigned max_indirect; /* 0: no indirect */
    bool persistent, flush, barrier, discard;
    bool hostile;
    uint64_t seed;
    unsigned hostile_pct;    /* chance per request of a hostile act */
    unsigned hostile_for_ms; /* then behave (0: forever) */
    unsigned hostile_after;  /* requests served well first */
};

/* ---- the store (tb_store.c) ---- */
struct tb_store;
struct tb_store *tb_store_open(const char *path, enum tb_cache cache, uint64_t *bytes);
void tb_store_close(struct tb_store *s);
int tb_store_read(struct tb_store *s, void *buf, uint64_t len, uint64_t off);
int tb_store_write(struct tb_store *s, const void *buf, uint64_t len, uint64_t off);
int tb_store_flush(struct tb_store *s);
int tb_store_discard(struct tb_store *s, uint64_t len, uint64_t off);

/* ---- the connection (tb_ring.c) ---- */
struct tb_conn;
struct tb_backend;

/* Map the frontend's ring and bind its port (keys read from fe dir). */
struct tb_conn *tb_conn_open(struct tb_backend *b);
void tb_conn_close(struct tb_conn *c);
/* Serve what is on the ring. Returns requests served. */
unsigned tb_conn_serve(struct tb_conn *c, bool event);

/* ---- hostility (tb_hostile.c) ---- */
enum tb_act {
    TB_ACT_NONE = 0,
    TB_ACT_RANDOM_ID,
    TB_ACT_DUPLICATE,
    TB_ACT_WRONG_OP,
    TB_ACT_BAD_STATUS,
    TB_ACT_GARBAGE_PROD,
    TB_ACT_EXTRA_RESPONSE,
    TB_ACT_DROP,
    TB_ACT_SCRIBBLE_RING,
    TB_ACT_STATE,
    TB_ACT_EVENT_STORM,
    TB_ACT_COUNT,
};
uint64_t tb_rand(void);
void tb_srand(uint64_t seed);
const char *tb_act_name(enum tb_act a);
/* The act for the next response (TB_ACT_NONE: behave). */
enum tb_act tb_hostile_next(struct tb_backend *b);

/* ---- the backend (tb_main.c) ---- */
struct tb_backend {
    struct tb_opts o;
    struct xs_handle *xs;
    xengnttab_handle *xgt;
    xenevtchn_handle *xce;
    char be[256], fe[256], drv[256], file[1024];
    unsigned fe_id, drv_id;
    struct tb_store *store;
    uint64_t sectors; /* 512-byte units */
    int state;        /* our XenbusState */
    struct tb_conn *conn;
    /* faults */
    uint64_t inject_seq;
    unsigned corrupt_left; /* next responses to make invalid */
    unsigned corrupt_kind;
    bool hang;
    unsigned slow_ms;
    uint64_t hostile_until_ms;
    uint64_t served;
    uint64_t acts[TB_ACT_COUNT];
};

void tb_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t tb_now_ms(void);
/* Write our state (logged). */
void tb_set_state(struct tb_backend *b, int state);

#endif
