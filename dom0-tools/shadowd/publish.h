/* publish.h - the status keys of a driver domain (publish.c). */
#ifndef SD_PUBLISH_H
#define SD_PUBLISH_H

struct sd_dom;

/* Write d's status keys under USK_SD_DIR/<name>, each only if it changed. */
void sd_publish(struct sd_dom *d);

#endif
