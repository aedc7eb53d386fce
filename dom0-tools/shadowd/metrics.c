/* metrics.c - counters in the Prometheus text exposition format (0.0.4),
 * served on the metrics socket and by `shadowctl metrics`. */
#define _GNU_SOURCE
#include "metrics.h"

#include "dom.h"

#include "sbuf.h"

#include <stdio.h>
#include <string.h>

static const char *const sources[SRC_COUNT] = {"death", "heartbeat", "report", "planned", "pause"};
static const char *const phases[] = {"detect", "restart", "rewire", "reconnect"};

static void head(struct sbuf *b, const char *name, const char *type, const char *help)
{
    sbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Domain names are [A-Za-z0-9_.-]: no escaping needed in label values. */
#define EACH_DOM for (unsigned i = 0; i < sd->ndoms; i++)
#define DOM      (&sd->doms[i])

void sd_metrics(struct sd *sd, struct sbuf *b)
{
    head(b, "shadowd_recoveries_total", "counter", "Recoveries completed, by driver domain.");
    EACH_DOM
    sbuf_printf(b, "shadowd_recoveries_total{domain=\"%s\"} %llu\n", DOM->conf->name,
                (unsigned long long)DOM->n_recoveries);
    head(b, "shadowd_recovery_failures_total", "counter",
         "Recoveries given up (restart budget exhausted), by driver domain.");
    EACH_DOM
    sbuf_printf(b, "shadowd_recovery_failures_total{domain=\"%s\"} %llu\n", DOM->conf->name,
                (unsigned long long)DOM->n_failures);
    head(b, "shadowd_restarts_total", "counter",
         "Driver domain (re)starts attempted by shadowd, by driver domain.");
    EACH_DOM
    sbuf_printf(b, "shadowd_restarts_total{domain=\"%s\"} %llu\n", DOM->conf->name,
                (unsigned long long)DOM->n_restarts);
    head(b, "shadowd_detections_total", "counter", "Failures detected, by domain and source.");
    EACH_DOM
    for (int s = 0; s < SRC_COUNT; s++)
        sbuf_printf(b, "shadowd_detections_total{domain=\"%s\",source=\"%s\"} %llu\n",
                    DOM->conf->name, sources[s], (unsigned long long)DOM->n_detect[s]);
    head(b, "shadowd_reports_total", "counter",
         "Frontend reports acted on or ignored (malformed, over budget), by domain.");
    EACH_DOM
    {
        sbuf_printf(b, "shadowd_reports_total{domain=\"%s\",verdict=\"accepted\"} %llu\n",
                    DOM->conf->name, (unsigned long long)DOM->n_reports_accepted);
        sbuf_printf(b, "shadowd_reports_total{domain=\"%s\",verdict=\"ignored\"} %llu\n",
                    DOM->conf->name, (unsigned long long)DOM->n_reports_ignored);
    }
    head(b, "shadowd_domain_state", "gauge",
         "1 for the state each driver domain is in (up, starting, recovering, failed).");
    static const char *const states[] = {"up", "starting", "recovering", "failed"};
    EACH_DOM
    for (int s = 0; s < 4; s++)
        sbuf_printf(b, "shadowd_domain_state{domain=\"%s\",state=\"%s\"} %d\n", DOM->conf->name,
                    states[s], !strcmp(sd_state_name(DOM), states[s]));
    head(b, "shadowd_devices", "gauge", "Devices recorded, by driver domain.");
    EACH_DOM
    {
        unsigned n = 0;
        for (unsigned k = 0; k < DOM->ndevs; k++)
            n += DOM->devs[k]->paired;
        sbuf_printf(b, "shadowd_devices{domain=\"%s\"} %u\n", DOM->conf->name, n);
    }
    head(b, "shadowd_standby_promotions_total", "counter",
         "Warm standbys promoted to serve (domains with standby on).");
    EACH_DOM
    if (DOM->sb.state != SB_OFF)
        sbuf_printf(b, "shadowd_standby_promotions_total{domain=\"%s\"} %llu\n", DOM->conf->name,
                    (unsigned long long)DOM->sb.n_promotions);
    head(b, "shadowd_standby_replacements_total", "counter",
         "Warm standbys that failed and were replaced.");
    EACH_DOM
    if (DOM->sb.state != SB_OFF)
        sbuf_printf(b, "shadowd_standby_replacements_total{domain=\"%s\"} %llu\n", DOM->conf->name,
                    (unsigned long long)DOM->sb.n_replacements);
    head(b, "shadowd_standby_ready", "gauge", "1 while a warm standby is ready to be promoted.");
    EACH_DOM
    if (DOM->sb.state != SB_OFF)
        sbuf_printf(b, "shadowd_standby_ready{domain=\"%s\"} %d\n", DOM->conf->name,
                    DOM->sb.state == SB_READY);
    head(b, "shadowd_recovery_phase_milliseconds", "summary",
         "Durations of the phases of completed recoveries, by domain and phase.");
    EACH_DOM
    for (int p = 0; p < 4; p++) {
        sbuf_printf(b, "shadowd_recovery_phase_milliseconds_sum{domain=\"%s\",phase=\"%s\"} %llu\n",
                    DOM->conf->name, phases[p], (unsigned long long)DOM->phase_sum[p]);
        sbuf_printf(b,
                    "shadowd_recovery_phase_milliseconds_count{domain=\"%s\",phase=\"%s\"} %llu\n",
                    DOM->conf->name, phases[p], (unsigned long long)DOM->phase_count);
    }
}
