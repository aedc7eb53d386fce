/* nbad.h - malformed netif tx requests, one kind at a time, for the
 * validation tests and the hostile frontend. */
#ifndef NBAD_H
#define NBAD_H

#include "nframe.h"
#include "nfront.h"

/* Names of the kinds, NULL-terminated. */
extern const char *const nbad_kinds[];

/* Send one malformed packet of kind on queue 0 (a UDP frame from src to
 * dst, broken one way) and collect its answers: 0 if every data slot was
 * answered NETIF_RSP_ERROR and every extra-info slot NETIF_RSP_NULL, with
 * the ids sent; -1 otherwise (t->err says what came back); -2 for an
 * unknown kind. */
int nbad_send(struct nf *t, const char *kind, const struct nfr_end *src, const struct nfr_end *dst);

#endif
