/* xs_map.c - chained hash map keyed by NUL-terminated strings. */
#include "xs_map.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    const char *key;
    void *val;
    uint32_t hash;
    struct entry *next;
};

struct xs_map {
    struct entry **slots;
    size_t nslots; /* power of two */
    size_t count;
};

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

struct xs_map *xs_map_new(void)
{
    struct xs_map *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->nslots = 64;
    m->slots = calloc(m->nslots, sizeof(*m->slots));
    if (!m->slots) {
        free(m);
        return NULL;
    }
    return m;
}

void xs_map_free(struct xs_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nslots; i++) {
        struct entry *e = m->slots[i];
        while (e) {
            struct entry *n = e->next;
            free(e);
            e = n;
        }
    }
    free(m->slots);
    free(m);
}

size_t xs_map_count(const struct xs_map *m)
{
    return m->count;
}

static struct entry **find(const struct xs_map *m, const char *key, uint32_t h)
{
    struct entry **pp = &m->slots[h & (m->nslots - 1)];
    while (*pp && ((*pp)->hash != h || strcmp((*pp)->key, key) != 0))
        pp = &(*pp)->next;
    return pp;
}

void *xs_map_get(const struct xs_map *m, const char *key)
{
    struct entry *e = *find(m, key, hash_str(key));
    return e ? e->val : NULL;
}

/* Double the table; on allocation failure keep the old one (still correct). */
static void grow(struct xs_map *m)
{
    size_t n = m->nslots * 2;
    struct entry **slots = calloc(n, sizeof(*slots));
    if (!slots)
        return;
    for (size_t i = 0; i < m->nslots; i++) {
        struct entry *e = m->slots[i];
        while (e) {
            struct entry *next = e->next;
            e->next = slots[e->hash & (n - 1)];
            slots[e->hash & (n - 1)] = e;
            e = next;
        }
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = n;
}

int xs_map_put(struct xs_map *m, const char *key, void *val)
{
    uint32_t h = hash_str(key);
    struct entry **pp = find(m, key, h);
    if (*pp) {
        (*pp)->key = key;
        (*pp)->val = val;
        return 0;
    }
    struct entry *e = malloc(sizeof(*e));
    if (!e)
        return ENOMEM;
    e->key = key;
    e->val = val;
    e->hash = h;
    e->next = NULL;
    *pp = e;
    if (++m->count > m->nslots)
        grow(m);
    return 0;
}

void *xs_map_del(struct xs_map *m, const char *key)
{
    struct entry **pp = find(m, key, hash_str(key));
    struct entry *e = *pp;
    if (!e)
        return NULL;
    void *val = e->val;
    *pp = e->next;
    free(e);
    m->count--;
    return val;
}

void xs_map_foreach(const struct xs_map *m, void (*fn)(void *val, void *arg), void *arg)
{
    for (size_t i = 0; i < m->nslots; i++)
        for (struct entry *e = m->slots[i]; e; e = e->next)
            fn(e->val, arg);
}
