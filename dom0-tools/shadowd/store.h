/* store.h - shadowd's xenstore connection and the watches it registers.
 * A watch's token is its kind and the index of the domain it is for; the
 * events are dispatched by events.c. */
#ifndef SD_STORE_H
#define SD_STORE_H

struct sd;
struct sd_dom;
struct sd_dev;

#define TOKEN_RELEASE 'R' /* @releaseDomain */
#define TOKEN_BACKEND 'B' /* B<dom index>: /local/domain/<drv>/backend */
#define TOKEN_HB      'H' /* H<dom index>: the serving domain's agent heartbeat */
#define TOKEN_FE      'F' /* F<dom index>: a recorded device's frontend dir */
#define TOKEN_SB      'S' /* S<dom index>: the standby's heartbeat */
#define TOKEN_CONSOLE 'C' /* C<dom index>: the serving domain's console dir (detect.c) */

int sd_store_open(struct sd *sd); /* connect, watch @releaseDomain */
void sd_store_close(struct sd *sd);
void sd_store_lost(struct sd *sd); /* connection failed: the loop exits */
/* Watches for the serving domain's d->srv.domid (and drop the old ones). */
void sd_store_watch_dom(struct sd_dom *d);
void sd_store_watch_standby(struct sd_dom *d); /* the standby's heartbeat */
void sd_store_watch_dev(struct sd_dom *d, struct sd_dev *v);
void sd_store_unwatch_dev(struct sd_dom *d, struct sd_dev *v);

#endif
