/* service.c - shadowd's word to its service manager (service.h). */
#define _GNU_SOURCE
#include "service.h"

#include "dom.h"
#include "log.h"
#include "notify.h"
#include "sbuf.h"

#include <stdio.h>
#include <string.h>

#define STATUS_MAX 256

/* What a domain is, for READY and STATUS. */
enum word { W_UP, W_BOOTING, W_STARTING, W_RECOVERING, W_WAITING, W_FAILED, W_COUNT };
static const char *const words[W_COUNT] = {"up",         "booting", "starting",
                                           "recovering", "waiting", "failed"};

static struct {
    bool ready;
    char status[STATUS_MAX]; /* the last one sent */
} s;

static enum word word_of(const struct sd_dom *d)
{
    if (d->startup_pending)
        return W_WAITING; /* its driver could not be asked yet */
    switch (d->state) {
    case DS_FAILED:
        return W_FAILED;
    case DS_RECOVERING:
        return d->rec.kind == RK_START ? W_STARTING : W_RECOVERING;
    default:
        /* Up, but its agent not heard from yet: its backends are not served. */
        return d->conf->heartbeat_timeout_ms && !d->srv.hb.seen ? W_BOOTING : W_UP;
    }
}

/* "3 driver domains: 2 up, 1 recovering (drv-net)": the count of each
 * word, and the names of the domains that are not up. */
static void summary(const struct sd *sd, char *buf, size_t len)
{
    unsigned count[W_COUNT] = {0};
    for (unsigned i = 0; i < sd->ndoms; i++)
        count[word_of(&sd->doms[i])]++;
    struct sbuf b = {0};
    sbuf_printf(&b, "%u driver domain%s:", sd->ndoms, sd->ndoms == 1 ? "" : "s");
    bool first = true;
    for (int w = 0; w < W_COUNT; w++) {
        if (!count[w])
            continue;
        sbuf_printf(&b, "%s %u %s", first ? "" : ",", count[w], words[w]);
        first = false;
        if (w == W_UP)
            continue;
        const char *sep = " (";
        for (unsigned i = 0; i < sd->ndoms; i++)
            if (word_of(&sd->doms[i]) == (enum word)w) {
                sbuf_printf(&b, "%s%s", sep, sd->doms[i].conf->name);
                sep = " ";
            }
        sbuf_printf(&b, ")");
    }
    snprintf(buf, len, "%s", sbuf_str(&b)); /* cut to len - 1, as a status line may be */
    sbuf_free(&b);
}

static bool settled(const struct sd *sd)
{
    for (unsigned i = 0; i < sd->ndoms; i++) {
        enum word w = word_of(&sd->doms[i]);
        if (w != W_UP && w != W_FAILED)
            return false;
    }
    return true;
}

void sd_service_tick(const struct sd *sd, uint64_t now)
{
    if (!sd_notify_on())
        return;
    char status[STATUS_MAX];
    summary(sd, status, sizeof(status));
    if (!s.ready) {
        bool all = settled(sd), late = now >= sd->started_ms + SD_READY_MAX_MS;
        if ((all || late) && sd_notify_send("READY=1\nSTATUS=%s", status) == 0) {
            s.ready = true;
            snprintf(s.status, sizeof(s.status), "%s", status);
            if (all)
                sd_log("told the service manager shadowd is ready: %s", status);
            else
                sd_log("told the service manager shadowd is ready after %d s, though not every "
                       "driver domain is up: %s",
                       SD_READY_MAX_MS / 1000, status);
        }
    }
    if (strcmp(status, s.status) != 0 && sd_notify_send("STATUS=%s", status) == 0)
        snprintf(s.status, sizeof(s.status), "%s", status);
    sd_notify_watchdog(now);
}

uint64_t sd_service_wake(const struct sd *sd)
{
    uint64_t w = sd_notify_watchdog_due();
    if (sd_notify_on() && !s.ready && sd->started_ms + SD_READY_MAX_MS < w)
        w = sd->started_ms + SD_READY_MAX_MS;
    return w;
}

void sd_service_stopping(void)
{
    sd_notify_send("STOPPING=1\nSTATUS=stopping; the driver domains keep running");
}

void sd_service_exiting(const char *why)
{
    sd_notify_send("STATUS=exiting: %s", why);
}
