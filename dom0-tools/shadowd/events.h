/* events.h - dispatch of xenstore watch events to the roles (events.c). */
#ifndef SD_EVENTS_H
#define SD_EVENTS_H

struct sd;

/* Read the queued watch events and hand each to its role. */
void sd_events_dispatch(struct sd *sd);

#endif
