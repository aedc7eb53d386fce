/* rewire.h - pointing a guest device at a new backend domain (rewire.c). */
#ifndef SD_REWIRE_H
#define SD_REWIRE_H

#include <stdbool.h>

struct sd_dom;
struct sd_dev;

/* Rewire v from its old backend to domain newdrv. 0, 1 (already done), or -1. */
int sd_rewire_dev(struct sd_dom *d, struct sd_dev *v, unsigned newdrv);
/* Has v reconnected to newdrv? */
bool sd_rewire_reconnected(struct sd_dom *d, struct sd_dev *v, unsigned newdrv);

#endif
