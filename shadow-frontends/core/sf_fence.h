/* sf_fence.h - the unfenced set of a disk (schema.md, FE/shadow/fenced):
 * what a failed backend may still write to storage, by its domain, until
 * that domain is known to be fenced. Pure bookkeeping; the engine reads
 * the key and asks about domains.
 *
 * At a fault the engine adds, for the failed backend's domain, the ranges
 * of every write it had outstanding and of every acknowledged write it had
 * not flushed (its data may still sit in that domain's page cache), with
 * the generation the backend served at. A fault during a recovery, or
 * before an earlier failed domain is fenced, adds to the set: one set of
 * ranges per domain, at most SFF_DOMS of them (more fold into the last,
 * which then only the key releases).
 *
 * A domain's ranges are released when
 *   - FE/shadow/fenced passes the generation it served at (G: every backend
 *     before generation G is fenced; the switch away from it is at a
 *     generation above the one it served at, so this is "fenced >= the
 *     switch's generation", or sooner where generations were skipped);
 *   - the domain is gone (destroyed: nothing of it runs any more);
 *   - the device connects to a backend in that same domain again (a
 *     backend process restarted by the domain's agent: the old process is
 *     dead, and the domain's own kernel orders its page cache before
 *     anything the new one writes).
 * Until then the engine holds every write that overlaps the set. */
#ifndef SF_FENCE_H
#define SF_FENCE_H

#include "sf_ranges.h"

#include <stdbool.h>
#include <stdint.h>

#define SFF_DOMS 4u

struct sff_set {
    unsigned domid;
    bool several; /* stands for more than one domain: released by the key only */
    uint64_t gen; /* the (latest) generation it served at */
    struct sf_ranges r;
};

struct sf_fence {
    struct sff_set s[SFF_DOMS];
    unsigned n;
};

void sff_init(struct sf_fence *f);
/* Release everything (NULL-safe). */
void sff_fini(struct sf_fence *f);
bool sff_empty(const struct sf_fence *f);

/* Domain domid, serving the device at generation gen, failed; it may still
 * write [start, start+len). */
void sff_add(struct sf_fence *f, unsigned domid, uint64_t gen, uint64_t start, uint64_t len);
/* Does a write of [start, start+len) overlap anything not yet fenced? */
bool sff_holds(const struct sf_fence *f, uint64_t start, uint64_t len);

/* FE/shadow/fenced reads fenced: every set that served before it goes.
 * Returns how many sets were released. */
unsigned sff_release_fenced(struct sf_fence *f, uint64_t fenced);
/* Domain domid is gone, or the device is connected to it again: its set
 * goes (not a folded one). Returns how many sets were released (0 or 1). */
unsigned sff_release_domain(struct sf_fence *f, unsigned domid);

/* Bytes not yet fenced, over every set (saturating). */
uint64_t sff_bytes(const struct sf_fence *f);

#endif
