/* sf_time.h - monotonic time for the shadow frontends. */
#ifndef SF_TIME_H
#define SF_TIME_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t sf_now_ms(void);

#endif
