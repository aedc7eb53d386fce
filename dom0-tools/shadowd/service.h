/* service.h - what shadowd tells its service manager, over notify.h:
 *
 *   READY=1     once every driver domain is up (its agent's heartbeat seen,
 *               or heartbeat-timeout off) or given up on (failed) - so a
 *               unit ordered after shadowd.service finds the driver domains
 *               running - and at the latest SD_READY_MAX_MS after shadowd
 *               started, whatever is still starting, recovering or waiting
 *               for its driver (within systemd's start timeout: a domain
 *               that cannot come up must not make the start fail)
 *   STATUS=     a one-line summary whenever it changes, e.g.
 *               "3 driver domains: 2 up, 1 recovering (drv-net)"
 *   WATCHDOG=1  from the loop, every half $WATCHDOG_USEC: a loop that hangs
 *               stops the pings and systemd kills and restarts shadowd
 *   STOPPING=1  on SIGTERM/SIGINT
 *
 * Nothing is sent without $NOTIFY_SOCKET. */
#ifndef SD_SERVICE_H
#define SD_SERVICE_H

#include <stdint.h>

#define SD_READY_MAX_MS 60000

struct sd;

/* Each loop turn, after the domains' own work: READY, STATUS, the ping. */
void sd_service_tick(const struct sd *sd, uint64_t now);
/* When sd_service_tick next has timed work (the ping, the READY deadline). */
uint64_t sd_service_wake(const struct sd *sd);
void sd_service_stopping(void);
/* shadowd exits on an error (the unit restarts it): the reason as STATUS. */
void sd_service_exiting(const char *why);

#endif
