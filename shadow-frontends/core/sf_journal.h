/* sf_journal.h - the shadow's request journal: every request the frontend
 * has accepted and not finished, and every acknowledged change that no
 * completed flush covers yet. Class-blind: an entry is a range of bytes with
 * ordering flags and an opaque class operation code.
 *
 * Lists:
 *   queue     entries not yet completed (pending and in flight), in dispatch
 *             order: the order conflicting entries must keep;
 *   inflight  entries on the ring, in issue order (the head is the oldest:
 *             deadline tracking);
 *   retained  acknowledged MODIFIES entries kept for replay, in ack order.
 *
 * Ordering rule (sfj_dispatch): an entry is issued only when no entry before
 * it in the queue conflicts with it. Two entries conflict when their ranges
 * overlap and one of them modifies; a FLUSH conflicts with every earlier
 * MODIFIES entry (it is issued only once they all completed, so it covers
 * them); a BARRIER also holds back every later entry until it completes.
 *
 * Retention: with a volatile write cache (sfj_set_conn: write_cache) a
 * completed MODIFIES entry stays in `retained` until a FLUSH that was issued
 * after its ack completes. sfj_requeue puts the retained entries back at the
 * head of the queue (ack order) and the in-flight ones back to pending (in
 * place), so that a reconnect replays all of them in an order that keeps
 * the rule above. The retention bound: a MODIFIES entry is not issued while
 * retained + in-flight modifying bytes would pass the limit; the journal then
 * asks for a flush (sfj_wants_flush) to be inserted before the first
 * pending entry.
 *
 * Hold (sfj_set_hold): a pending MODIFIES entry the hook names is not
 * issued (the fence: it overlaps what a failed backend may still write).
 * The ordering rule keeps everything that conflicts with it behind it, so
 * held writes go out in their order once the hook lets them; the rest
 * passes them. Each dispatch counts the entries that wait for the hold,
 * held themselves or behind one that is (sfj.held: reads of their sectors,
 * flushes after them), and the replay entries among them (held_replay).
 */
#ifndef SF_JOURNAL_H
#define SF_JOURNAL_H

#include "sf_list.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SFJ_MODIFIES 0x1u  /* changes the device: ordered, retained */
#define SFJ_FLUSH    0x2u  /* issued after every earlier MODIFIES entry completed */
#define SFJ_BARRIER  0x4u  /* with SFJ_FLUSH: later entries wait for it too */
#define SFJ_INTERNAL 0x8u  /* issued by the frontend itself: nobody waits */
#define SFJ_DATA     0x10u /* data[0..len) maps onto [start, start+len): splittable */

enum sfj_state {
    SFJ_PENDING = 1, /* in the queue, not on a ring */
    SFJ_INFLIGHT,    /* on the ring, has a slot and a wire id */
    SFJ_RETAINED,    /* acknowledged, kept for replay */
};

struct sfj_entry {
    struct sf_link q;  /* queue */
    struct sf_link fl; /* inflight or retained */
    uint64_t seq;      /* submission order, never changes */
    uint32_t flags;    /* SFJ_* */
    uint32_t op;       /* the class's operation code, opaque here */
    uint64_t start;    /* byte range touched; len 0 for flushes */
    uint64_t len;
    void *data;      /* private copy of data to write, or the caller's read buffer */
    bool data_owned; /* data is malloc'ed and freed with the entry */
    void *owner;     /* the request waiting on it; NULL for retained and internal ones */
    enum sfj_state state;
    bool replay;         /* part of a recovery's replay set (was issued before) */
    uint32_t slot;       /* while in flight */
    uint64_t wire_id;    /* while in flight: the id the backend must echo */
    uint64_t issued_ms;  /* while in flight */
    uint64_t ack_no;     /* retained: position in ack order */
    uint64_t flush_mark; /* flush in flight: the last ack_no it covers */
    unsigned issues;     /* how many times it went on a ring */
    uint64_t held_ms;    /* when the hold first kept it back (0: never) */
    bool blocked;        /* last dispatch: held, or behind a held entry */
};

/* Outcome of looking up a wire id from a response. */
enum sfj_lookup {
    SFJ_FOUND = 0,
    SFJ_UNKNOWN,   /* no entry ever had that id on this connection */
    SFJ_DUPLICATE, /* the entry with that id already completed */
};

/* Whether a pending MODIFIES entry must wait (see "Hold" above). */
typedef bool (*sfj_hold_fn)(void *arg, const struct sfj_entry *e);

struct sfj {
    struct sf_link queue, inflight, retained;
    struct sfj_entry **slots; /* by slot: the in-flight entry, or NULL */
    uint64_t *last_id;        /* by slot: wire id of the last completion (duplicates) */
    uint32_t *free_slots;     /* stack of free slot numbers */
    uint32_t nslots, nfree;
    uint64_t next_seq, next_issue, ack_counter;
    uint64_t retained_bytes, inflight_mod_bytes, limit;
    bool write_cache; /* completed changes need a flush to be durable */
    bool want_flush;  /* the retention bound blocked a write */
    unsigned n_queue, n_inflight, n_retained;
    sfj_hold_fn hold; /* NULL: nothing is held */
    void *hold_arg;
    /* the last dispatch: entries waiting for the hold, the replay entries
     * among them, and the earliest held_ms of those (0: none) */
    unsigned held, held_replay;
    uint64_t held_oldest;
    /* statistics */
    uint64_t replayed, released, forced_flushes;
};

/* limit: retention bound in bytes (0: none). 0 or -1 (ENOMEM). */
int sfj_init(struct sfj *j, uint64_t limit);
/* Free every entry (their owners must not be waiting any more) and the slots. */
void sfj_fini(struct sfj *j);

/* A new entry; data, if any, is attached by the caller. NULL on ENOMEM. */
struct sfj_entry *sfj_entry_new(uint32_t flags, uint32_t op, uint64_t start, uint64_t len);
/* Free an entry that is on no list (NULL-safe). */
void sfj_entry_free(struct sfj_entry *e);

/* A new connection: nslots ring slots (1..65536), write cache or not.
 * Nothing may be in flight. 0 or -1 (EBUSY, EINVAL, ENOMEM). */
int sfj_set_conn(struct sfj *j, uint32_t nslots, bool write_cache);

/* Set the hold hook (NULL: none). */
void sfj_set_hold(struct sfj *j, sfj_hold_fn hold, void *arg);

/* Call fn for every range the connection's backend may still write: each
 * MODIFIES entry in flight and each retained one (call before
 * sfj_requeue). */
void sfj_visit_exposed(const struct sfj *j, void (*fn)(void *arg, const struct sfj_entry *e),
                       void *arg);

/* Append a new entry to the queue as pending. */
void sfj_submit(struct sfj *j, struct sfj_entry *e);

/* Called by sfj_dispatch for each entry it may issue; the entry already has
 * its slot and wire id. Return 0 if it is on the ring, 1 if the class
 * completed it without the ring (*status set, see sfj_complete), -1 if out
 * of resources now (the entry goes back to pending; dispatch stops). */
typedef int (*sfj_issue_fn)(void *arg, struct sfj_entry *e, int *status);
/* Called for each entry that completed (from sfj_dispatch or
 * sfj_complete): owner is the entry's owner (may be NULL), status 0 or an
 * errno value. */
typedef void (*sfj_done_fn)(void *arg, void *owner, struct sfj_entry *e, int status);

/* Issue every pending entry the ordering rule and the retention bound allow,
 * while slots last. Returns how many went on the ring. */
unsigned sfj_dispatch(struct sfj *j, uint64_t now_ms, sfj_issue_fn issue, sfj_done_fn done,
                      void *arg);

/* Whether the retention bound blocks a write and no flush is ahead of it.
 * The caller then submits an internal flush with sfj_insert_flush. */
bool sfj_wants_flush(const struct sfj *j);
/* Insert a flush entry before the first pending entry (at the tail if none). */
void sfj_insert_flush(struct sfj *j, struct sfj_entry *flush);

/* Look up the entry for a wire id from a response. */
enum sfj_lookup sfj_lookup(const struct sfj *j, uint64_t wire_id, struct sfj_entry **out);

/* An in-flight (or pending) entry completed with status (0 = success, else
 * an errno value for the owner). Calls done(owner, e, status) for it first;
 * then a successful MODIFIES entry is retained (if there is a write cache)
 * and anything else freed; a successful FLUSH frees the retained entries it
 * covers. Entries are freed by the journal: do not touch e afterwards. */
void sfj_complete(struct sfj *j, struct sfj_entry *e, int status, sfj_done_fn done, void *arg);

/* The connection is gone: every in-flight entry back to pending in place,
 * every retained entry to the head of the queue in ack order; those are the
 * replay set (marked replay: exempt from the retention bound, which they
 * were within already). Entries never issued stay as they are: held. Slots
 * are forgotten. Returns the size of the replay set. */
unsigned sfj_requeue(struct sfj *j);

/* Split every pending SFJ_DATA entry longer than max_len (a multiple of
 * align) into consecutive entries of at most max_len. Calls split(arg,
 * owner) once per new entry, so that the owner can count it. 0 or -1 (ENOMEM;
 * entries already split stay split). */
int sfj_split(struct sfj *j, uint64_t max_len, void (*split)(void *arg, void *owner), void *arg);

/* Entries in the queue marked replay. */
unsigned sfj_replay_count(const struct sfj *j);

/* Issue time of the oldest in-flight entry; false if none is in flight. */
bool sfj_oldest(const struct sfj *j, uint64_t *issued_ms, const struct sfj_entry **e);

/* Fail everything: calls done(owner, e, status) for every queued entry and
 * frees it, and frees every retained entry. Returns the retained bytes lost. */
uint64_t sfj_fail_all(struct sfj *j, int status, sfj_done_fn done, void *arg);

#endif
