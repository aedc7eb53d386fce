/* status.h - what `shadowctl status` and `shadowctl history` print (status.c). */
#ifndef SD_STATUS_H
#define SD_STATUS_H

#include <stdbool.h>

struct sd;
struct sbuf;

void sd_status_text(struct sd *sd, struct sbuf *b);
void sd_status_json(struct sd *sd, struct sbuf *b);
void sd_history_text(struct sd *sd, struct sbuf *b, bool json);

#endif
