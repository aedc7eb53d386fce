/* sf_ranges.h - a set of byte ranges: sorted, disjoint, touching ones
 * merged. The fence (sf_fence.h) keeps one per failed backend: the ranges
 * it may still write.
 *
 * Adding never fails and never forgets: the set holds at most
 * SF_RANGES_MAX ranges, and past that (or when memory runs out) it grows
 * coarser - the two neighbours closest together are merged with the gap
 * between them, or, with no memory at all, the set covers everything. A
 * coarser set only holds back more writes, never fewer. */
#ifndef SF_RANGES_H
#define SF_RANGES_H

#include <stdbool.h>
#include <stdint.h>

#define SF_RANGES_MAX 4096u

struct sf_range {
    uint64_t start, end; /* [start, end) */
};

struct sf_ranges {
    struct sf_range *v; /* sorted by start, disjoint, none touching */
    unsigned n, cap;
    bool all; /* covers every byte (no memory for the ranges) */
};

/* An empty set (no allocation). */
void sf_ranges_init(struct sf_ranges *s);
/* Empty it and free its memory (NULL-safe). */
void sf_ranges_fini(struct sf_ranges *s);
bool sf_ranges_empty(const struct sf_ranges *s);

/* Add [start, start+len) (len 0: nothing; the end saturates at 2^64-1). */
void sf_ranges_add(struct sf_ranges *s, uint64_t start, uint64_t len);
/* Add every range of src. */
void sf_ranges_merge(struct sf_ranges *dst, const struct sf_ranges *src);
/* Does [start, start+len) share a byte with the set? (len 0: never.) */
bool sf_ranges_overlap(const struct sf_ranges *s, uint64_t start, uint64_t len);
/* Bytes covered (UINT64_MAX when it covers everything). */
uint64_t sf_ranges_bytes(const struct sf_ranges *s);

#endif
