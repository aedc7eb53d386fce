/* metrics.h - the Prometheus text of the metrics socket (metrics.c). */
#ifndef SD_METRICS_H
#define SD_METRICS_H

struct sd;
struct sbuf;

void sd_metrics(struct sd *sd, struct sbuf *b);

#endif
