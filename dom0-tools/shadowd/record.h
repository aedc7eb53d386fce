/* record.h - recording the devices a driver domain serves (record.c): each
 * backend dir, its toolstack keys and its frontend dir, kept while the
 * backend and the frontend point at each other. */
#ifndef SD_RECORD_H
#define SD_RECORD_H

#include <stdbool.h>
#include <stddef.h>

struct sd;
struct sd_dom;
struct sd_dev;
struct sd_kv;

void sd_record_scan(struct sd_dom *d); /* every backend dir of the serving domain */
void sd_record_be_event(struct sd_dom *d, const char *path);
void sd_record_fe_check(struct sd_dom *d, struct sd_dev *v);
struct sd_dev *sd_record_find(struct sd_dom *d, const char *type, unsigned fe, unsigned devid);
struct sd_dev *sd_record_add(struct sd_dom *d, const char *type, unsigned fe, unsigned devid);
void sd_record_drop(struct sd_dom *d, struct sd_dev *v, const char *why);
/* Distinct guests among paired devices; *only is set when there is one. */
unsigned sd_record_guests(const struct sd_dom *d, unsigned *only);
void sd_dev_free(struct sd_dev *v);
int sd_dev_set_kv(struct sd_dev *v, struct sd_kv *kv, unsigned n); /* takes kv */
bool sd_key_published(const struct sd *sd, const char *key);
void sd_be_path(char *buf, size_t len, unsigned drv, const struct sd_dev *v);

#endif
