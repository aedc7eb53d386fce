/* sf_list.h - an intrusive doubly linked list with a sentinel head, as in
 * the kernel: O(1) insert and remove, no allocation. */
#ifndef SF_LIST_H
#define SF_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct sf_link {
    struct sf_link *prev, *next;
};

#define SF_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static inline void sf_list_init(struct sf_link *head)
{
    head->prev = head->next = head;
}

static inline bool sf_list_empty(const struct sf_link *head)
{
    return head->next == head;
}

/* A link that is on no list points to itself (after sf_list_init or del). */
static inline bool sf_linked(const struct sf_link *l)
{
    return l->next != l && l->next != NULL;
}

static inline void sf_list_insert_after(struct sf_link *pos, struct sf_link *l)
{
    l->prev = pos;
    l->next = pos->next;
    pos->next->prev = l;
    pos->next = l;
}

static inline void sf_list_insert_before(struct sf_link *pos, struct sf_link *l)
{
    sf_list_insert_after(pos->prev, l);
}

static inline void sf_list_append(struct sf_link *head, struct sf_link *l)
{
    sf_list_insert_before(head, l);
}

static inline void sf_list_del(struct sf_link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = l;
}

#endif
