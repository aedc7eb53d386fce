/* sf_journal.c - the request journal (see sf_journal.h for the rules). */
#define _GNU_SOURCE
#include "sf_journal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define E_OF_Q(l)  SF_CONTAINER(l, struct sfj_entry, q)
#define E_OF_FL(l) SF_CONTAINER(l, struct sfj_entry, fl)

/* Wire ids carry the slot in the low 16 bits and an issue count above it, so
 * that an id is never reused on one connection. */
#define SLOT_BITS 16u
#define SLOT_MASK ((1u << SLOT_BITS) - 1u)

int sfj_init(struct sfj *j, uint64_t limit)
{
    memset(j, 0, sizeof(*j));
    sf_list_init(&j->queue);
    sf_list_init(&j->inflight);
    sf_list_init(&j->retained);
    j->limit = limit;
    return 0;
}

static void free_slots(struct sfj *j)
{
    free(j->slots);
    free(j->last_id);
    free(j->free_slots);
    j->slots = NULL;
    j->last_id = NULL;
    j->free_slots = NULL;
    j->nslots = j->nfree = 0;
}

void sfj_fini(struct sfj *j)
{
    while (!sf_list_empty(&j->queue)) {
        struct sfj_entry *e = E_OF_Q(j->queue.next);
        sf_list_del(&e->q);
        sf_list_del(&e->fl);
        sfj_entry_free(e);
    }
    while (!sf_list_empty(&j->retained)) {
        struct sfj_entry *e = E_OF_FL(j->retained.next);
        sf_list_del(&e->fl);
        sfj_entry_free(e);
    }
    free_slots(j);
    j->n_queue = j->n_inflight = j->n_retained = 0;
    j->retained_bytes = j->inflight_mod_bytes = 0;
}

struct sfj_entry *sfj_entry_new(uint32_t flags, uint32_t op, uint64_t start, uint64_t len)
{
    struct sfj_entry *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    sf_list_init(&e->q);
    sf_list_init(&e->fl);
    e->flags = flags;
    e->op = op;
    e->start = start;
    e->len = len;
    return e;
}

void sfj_entry_free(struct sfj_entry *e)
{
    if (!e)
        return;
    if (e->data_owned)
        free(e->data);
    free(e);
}

int sfj_set_conn(struct sfj *j, uint32_t nslots, bool write_cache)
{
    if (j->n_inflight) {
        errno = EBUSY;
        return -1;
    }
    if (nslots == 0 || nslots > SLOT_MASK + 1u) {
        errno = EINVAL;
        return -1;
    }
    free_slots(j);
    j->slots = calloc(nslots, sizeof(*j->slots));
    j->last_id = calloc(nslots, sizeof(*j->last_id));
    j->free_slots = calloc(nslots, sizeof(*j->free_slots));
    if (!j->slots || !j->last_id || !j->free_slots) {
        free_slots(j);
        errno = ENOMEM;
        return -1;
    }
    j->nslots = nslots;
    for (uint32_t i = 0; i < nslots; i++)
        j->free_slots[i] = nslots - 1u - i; /* pop order 0, 1, 2, ... */
    j->nfree = nslots;
    j->write_cache = write_cache;
    if (!write_cache) {
        /* Nothing to make durable: what is retained is on stable storage
         * once the new backend completes it, so no flush will come. */
        while (!sf_list_empty(&j->retained)) {
            struct sfj_entry *e = E_OF_FL(j->retained.next);
            sf_list_del(&e->fl);
            j->retained_bytes -= e->len;
            j->n_retained--;
            j->released++;
            sfj_entry_free(e);
        }
    }
    return 0;
}

void sfj_set_hold(struct sfj *j, sfj_hold_fn hold, void *arg)
{
    j->hold = hold;
    j->hold_arg = arg;
}

void sfj_visit_exposed(const struct sfj *j, void (*fn)(void *arg, const struct sfj_entry *e),
                       void *arg)
{
    for (const struct sf_link *l = j->inflight.next; l != &j->inflight; l = l->next)
        if (E_OF_FL(l)->flags & SFJ_MODIFIES)
            fn(arg, E_OF_FL(l));
    for (const struct sf_link *l = j->retained.next; l != &j->retained; l = l->next)
        fn(arg, E_OF_FL(l));
}

void sfj_submit(struct sfj *j, struct sfj_entry *e)
{
    e->seq = ++j->next_seq;
    e->state = SFJ_PENDING;
    sf_list_append(&j->queue, &e->q);
    j->n_queue++;
}

static bool overlap(const struct sfj_entry *a, const struct sfj_entry *b)
{
    if (!a->len || !b->len)
        return false;
    return a->start < b->start + b->len && b->start < a->start + a->len;
}

/* Which entry before e in the queue keeps e from being issued (the first
 * found), or NULL. Sets *flush_ahead when a flush precedes e. */
static const struct sfj_entry *held_back(const struct sfj *j, const struct sfj_entry *e,
                                         bool *flush_ahead)
{
    *flush_ahead = false;
    for (const struct sf_link *l = j->queue.next; l != &e->q; l = l->next) {
        const struct sfj_entry *x = E_OF_Q(l);
        if (x->flags & SFJ_FLUSH)
            *flush_ahead = true;
        /* (No barrier can be ahead: dispatch stops at one.) */
        if (e->flags & SFJ_FLUSH) {
            if (x->flags & SFJ_MODIFIES)
                return x;
            continue;
        }
        if (x->flags & SFJ_FLUSH)
            continue;
        if (((x->flags | e->flags) & SFJ_MODIFIES) && overlap(x, e))
            return x;
    }
    return NULL;
}

static bool on_hold(const struct sfj *j, const struct sfj_entry *e)
{
    return j->hold && (e->flags & SFJ_MODIFIES) && j->hold(j->hold_arg, e);
}

/* e waits for the hold, itself or behind an entry that does: counted, and
 * when it first waited noted. */
static void count_held(struct sfj *j, struct sfj_entry *e, uint64_t now_ms)
{
    if (!e->held_ms)
        e->held_ms = now_ms ? now_ms : 1;
    if (!j->held_oldest || e->held_ms < j->held_oldest)
        j->held_oldest = e->held_ms;
    j->held++;
    j->held_replay += e->replay;
}

static bool over_bound(const struct sfj *j, const struct sfj_entry *e)
{
    if (!(e->flags & SFJ_MODIFIES) || e->replay || !j->write_cache || !j->limit)
        return false;
    uint64_t held = j->retained_bytes + j->inflight_mod_bytes;
    return held > 0 && held + e->len > j->limit;
}

static void take_slot(struct sfj *j, struct sfj_entry *e, uint64_t now_ms)
{
    uint32_t slot = j->free_slots[--j->nfree];
    j->slots[slot] = e;
    e->slot = slot;
    e->wire_id = (++j->next_issue << SLOT_BITS) | slot;
    e->issued_ms = now_ms;
    e->state = SFJ_INFLIGHT;
    e->blocked = false;
    if (e->flags & SFJ_FLUSH)
        e->flush_mark = j->ack_counter;
    if (e->flags & SFJ_MODIFIES)
        j->inflight_mod_bytes += e->len;
    sf_list_append(&j->inflight, &e->fl);
    j->n_inflight++;
}

static void drop_slot(struct sfj *j, struct sfj_entry *e)
{
    j->slots[e->slot] = NULL;
    j->free_slots[j->nfree++] = e->slot;
    if (e->flags & SFJ_MODIFIES)
        j->inflight_mod_bytes -= e->len;
    sf_list_del(&e->fl);
    j->n_inflight--;
}

unsigned sfj_dispatch(struct sfj *j, uint64_t now_ms, sfj_issue_fn issue, sfj_done_fn done,
                      void *arg)
{
    unsigned issued = 0;
    j->want_flush = false;
    j->held = j->held_replay = 0;
    j->held_oldest = 0;
    /* Note that's O(n^2) in the queue length; the ring size and the bound on
     * held requests keep n in the hundreds. */
    struct sf_link *next;
    for (struct sf_link *l = j->queue.next; l != &j->queue; l = next) {
        next = l->next;
        struct sfj_entry *e = E_OF_Q(l);
        if (e->state == SFJ_PENDING) {
            bool flush_ahead;
            /* Entries before e were seen in this pass: a blocker's flag is
             * current (an in-flight one's is false). */
            const struct sfj_entry *by = held_back(j, e, &flush_ahead);
            e->blocked = by ? by->blocked : on_hold(j, e);
            if (e->blocked)
                count_held(j, e, now_ms);
            if (by || e->blocked)
                goto after;
            if (over_bound(j, e)) {
                if (!flush_ahead)
                    j->want_flush = true;
                goto after;
            }
            if (!j->nfree)
                break;
            take_slot(j, e, now_ms);
            int status = 0;
            int r = issue(arg, e, &status);
            if (r < 0) {
                drop_slot(j, e);
                e->state = SFJ_PENDING;
                break;
            }
            e->issues++;
            if (r > 0) {
                sfj_complete(j, e, status, done, arg);
                continue;
            }
            issued++;
        }
    after:
        if (e->flags & SFJ_BARRIER)
            break; /* nothing after an unfinished barrier goes */
    }
    return issued;
}

bool sfj_wants_flush(const struct sfj *j)
{
    return j->want_flush;
}

void sfj_insert_flush(struct sfj *j, struct sfj_entry *flush)
{
    flush->seq = ++j->next_seq;
    flush->state = SFJ_PENDING;
    struct sf_link *l;
    for (l = j->queue.next; l != &j->queue; l = l->next)
        if (E_OF_Q(l)->state == SFJ_PENDING)
            break;
    sf_list_insert_before(l, &flush->q);
    j->n_queue++;
    j->want_flush = false;
    j->forced_flushes++;
}

enum sfj_lookup sfj_lookup(const struct sfj *j, uint64_t wire_id, struct sfj_entry **out)
{
    *out = NULL;
    uint64_t slot = wire_id & SLOT_MASK;
    if (slot >= j->nslots)
        return SFJ_UNKNOWN;
    struct sfj_entry *e = j->slots[slot];
    if (e && e->wire_id == wire_id) {
        *out = e;
        return SFJ_FOUND;
    }
    if (j->last_id[slot] == wire_id && wire_id != 0)
        return SFJ_DUPLICATE;
    return SFJ_UNKNOWN;
}

static void release_covered(struct sfj *j, uint64_t mark)
{
    while (!sf_list_empty(&j->retained)) {
        struct sfj_entry *r = E_OF_FL(j->retained.next);
        if (r->ack_no > mark)
            break;
        sf_list_del(&r->fl);
        j->retained_bytes -= r->len;
        j->n_retained--;
        j->released++;
        sfj_entry_free(r);
    }
}

void sfj_complete(struct sfj *j, struct sfj_entry *e, int status, sfj_done_fn done, void *arg)
{
    if (e->state == SFJ_INFLIGHT) {
        j->last_id[e->slot] = e->wire_id;
        drop_slot(j, e);
    }
    sf_list_del(&e->q);
    j->n_queue--;
    if (e->replay)
        j->replayed++;
    done(arg, e->owner, e, status);
    if (status == 0 && (e->flags & SFJ_FLUSH))
        release_covered(j, e->flush_mark);
    if (status == 0 && (e->flags & SFJ_MODIFIES) && j->write_cache) {
        e->state = SFJ_RETAINED;
        e->owner = NULL;
        e->replay = false;
        e->ack_no = ++j->ack_counter;
        sf_list_append(&j->retained, &e->fl);
        j->retained_bytes += e->len;
        j->n_retained++;
        return;
    }
    if (status == 0 && (e->flags & SFJ_MODIFIES))
        j->ack_counter++;
    sfj_entry_free(e);
}

unsigned sfj_requeue(struct sfj *j)
{
    unsigned n = 0;
    while (!sf_list_empty(&j->inflight)) {
        struct sfj_entry *e = E_OF_FL(j->inflight.next);
        sf_list_del(&e->fl);
        e->state = SFJ_PENDING;
        e->replay = true;
        n++;
    }
    j->n_inflight = 0;
    j->inflight_mod_bytes = 0;
    /* Retained entries go to the head, keeping ack order. */
    while (!sf_list_empty(&j->retained)) {
        struct sfj_entry *e = E_OF_FL(j->retained.prev);
        sf_list_del(&e->fl);
        e->state = SFJ_PENDING;
        e->replay = true;
        sf_list_insert_after(&j->queue, &e->q);
        j->n_queue++;
        n++;
    }
    j->n_retained = 0;
    j->retained_bytes = 0;
    j->want_flush = false;
    j->held = j->held_replay = 0; /* until the next dispatch counts again */
    j->held_oldest = 0;
    free_slots(j);
    return n;
}

int sfj_split(struct sfj *j, uint64_t max_len, void (*split)(void *arg, void *owner), void *arg)
{
    if (max_len == 0) {
        errno = EINVAL;
        return -1;
    }
    for (struct sf_link *l = j->queue.next; l != &j->queue; l = l->next) {
        struct sfj_entry *e = E_OF_Q(l);
        if (e->state != SFJ_PENDING || !(e->flags & SFJ_DATA) || e->len <= max_len)
            continue;
        /* Cut the tail off, one piece at a time, inserting each right after e:
         * the pieces end up in order after e. */
        while (e->len > max_len) {
            uint64_t tail_off = (e->len - 1) / max_len * max_len;
            uint64_t tail_len = e->len - tail_off;
            struct sfj_entry *p = sfj_entry_new(e->flags, e->op, e->start + tail_off, tail_len);
            if (!p)
                goto nomem;
            if (e->data_owned) {
                p->data = malloc(tail_len);
                if (!p->data) {
                    free(p);
                    goto nomem;
                }
                memcpy(p->data, (char *)e->data + tail_off, tail_len);
                p->data_owned = true;
            } else if (e->data) {
                p->data = (char *)e->data + tail_off;
            }
            p->owner = e->owner;
            p->replay = e->replay;
            p->seq = e->seq;
            p->state = SFJ_PENDING;
            sf_list_insert_after(&e->q, &p->q);
            j->n_queue++;
            e->len = tail_off;
            if (split)
                split(arg, p->owner);
        }
    }
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

unsigned sfj_replay_count(const struct sfj *j)
{
    unsigned n = 0;
    for (const struct sf_link *l = j->queue.next; l != &j->queue; l = l->next)
        n += E_OF_Q(l)->replay;
    return n;
}

bool sfj_oldest(const struct sfj *j, uint64_t *issued_ms, const struct sfj_entry **e)
{
    if (sf_list_empty(&j->inflight))
        return false;
    const struct sfj_entry *o = E_OF_FL(j->inflight.next);
    *issued_ms = o->issued_ms;
    if (e)
        *e = o;
    return true;
}

uint64_t sfj_fail_all(struct sfj *j, int status, sfj_done_fn done, void *arg)
{
    while (!sf_list_empty(&j->queue)) {
        struct sfj_entry *e = E_OF_Q(j->queue.next);
        if (e->state == SFJ_INFLIGHT)
            drop_slot(j, e);
        sf_list_del(&e->q);
        j->n_queue--;
        done(arg, e->owner, e, status);
        sfj_entry_free(e);
    }
    uint64_t lost = j->retained_bytes;
    while (!sf_list_empty(&j->retained)) {
        struct sfj_entry *e = E_OF_FL(j->retained.next);
        sf_list_del(&e->fl);
        sfj_entry_free(e);
    }
    j->n_retained = 0;
    j->retained_bytes = 0;
    return lost;
}
