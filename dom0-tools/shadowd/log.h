/* log.h - shadowd's clock and log: one line per event on stderr (the
 * journal, under systemd), stamped with seconds since shadowd started. */
#ifndef SD_LOG_H
#define SD_LOG_H

#include <stdint.h>

struct sd_dom;

uint64_t sd_now(void); /* CLOCK_MONOTONIC ms */
/* Stamps count from t0 (sd_now() at startup). */
void sd_log_start(uint64_t t0);
uint64_t sd_log_t0(void);
/* The name lines start with: "shadowd" unless set (shadowd-priv sets its own). */
void sd_log_prog(const char *name);
void sd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line about driver domain d, prefixed with its name. */
void sd_dlog(const struct sd_dom *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
