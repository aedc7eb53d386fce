/* notify.h - systemd's notify protocol, spoken by shadowd itself (no
 * libsystemd): each notification is one datagram of KEY=VALUE lines sent to
 * the AF_UNIX socket $NOTIFY_SOCKET names (a path, or an abstract name if it
 * starts with '@'), and the watchdog pings every half $WATCHDOG_USEC unless
 * $WATCHDOG_PID names another process (sd_notify(3), systemd.service(5)).
 * Without $NOTIFY_SOCKET every call does nothing. What shadowd says, and
 * when, is service.h's. */
#ifndef SD_NOTIFY_H
#define SD_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID, unsets them (so that
 * shadowd-priv and what its drivers run do not inherit them) and connects
 * the socket, close-on-exec. Call once, before anything is forked and while
 * still root (the connected socket needs no permission on its path after
 * the drop). Never fails: a problem is logged and notifications are off. */
void sd_notify_init(void);
bool sd_notify_on(void);
/* One datagram of the lines in fmt (no trailing newline needed). 0 if sent
 * or notifications are off; -1 if not sent (logged the first time only). */
int sd_notify_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The watchdog: when the next WATCHDOG=1 is due (CLOCK_MONOTONIC ms;
 * UINT64_MAX without a watchdog), and the ping itself, sent if due. */
uint64_t sd_notify_watchdog_due(void);
void sd_notify_watchdog(uint64_t now);
uint64_t sd_notify_watchdog_interval(void); /* ms between pings; 0: none */
void sd_notify_close(void);

#endif
