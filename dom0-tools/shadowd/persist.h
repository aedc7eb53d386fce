/* persist.h - shadowd's state dir (persist.c): what survives shadowd. */
#ifndef SD_PERSIST_H
#define SD_PERSIST_H

#include <stdbool.h>

struct sd;
struct sd_dom;
struct sd_hist;

int sd_persist_init(struct sd *sd);
int sd_persist_save_devs(struct sd_dom *d);
int sd_persist_load_devs(struct sd_dom *d);
int sd_persist_save_rec(struct sd_dom *d);
int sd_persist_load_rec(struct sd_dom *d, bool *found);
void sd_persist_drop_rec(struct sd_dom *d);
void sd_persist_history_append(struct sd *sd, const struct sd_hist *h);
void sd_persist_history_load(struct sd *sd);

#endif
