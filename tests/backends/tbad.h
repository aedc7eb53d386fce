/* tbad.h - malformed blkif requests, one kind at a time, for the
 * validation tests and the hostile frontend. */
#ifndef TBAD_H
#define TBAD_H

#include "tfront.h"

/* Names of the kinds, NULL-terminated. */
extern const char *const tbad_kinds[];

/* Send one malformed request of kind; *want is the status blkif.h calls for,
 * the return value the status received (or -100: no answer, t->err says
 * why; -101: unknown kind). The request aims at sector base.. so that the
 * test can check that nothing outside it changed. */
int tbad_send(struct tf *t, const char *kind, uint64_t base, int *want);

#endif
