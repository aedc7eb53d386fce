/* dom.c - a driver domain's names (instance.h), and the words for its
 * states (dom.h, recovery.h) as the status keys (schema.md), `shadowctl
 * status` and the metrics show them. */
#include "dom.h"

#include "understudy-keys.h"

#include <stdio.h>

const char *sd_dom_name(const struct sd_dom *d, unsigned slot, char *buf, size_t len)
{
    if (slot == 0)
        snprintf(buf, len, "%s", d->conf->name);
    else
        snprintf(buf, len, "%s" SD_STANDBY_SUFFIX, d->conf->name);
    return buf;
}

const char *sd_inst_name(const struct sd_inst *in, char *buf, size_t len)
{
    /* d->slot is the serving domain's; the standby has the other name. */
    unsigned slot = in->role == SD_ROLE_SERVING ? in->dom->slot : !in->dom->slot;
    return sd_dom_name(in->dom, slot, buf, len);
}

static const char *const phase_names[] = {"restart", "rewire", "reconnect"};
static const char *const kind_names[] = {"start", "failure", "planned"};

const char *sd_phase_name(enum sd_phase p)
{
    return (unsigned)p < 3 ? phase_names[p] : "?";
}

const char *sd_kind_name(enum sd_rkind k)
{
    return (unsigned)k < 3 ? kind_names[k] : "?";
}

const char *sd_state_name(const struct sd_dom *d)
{
    switch (d->state) {
    case DS_UP:
        return USK_SD_STATE_UP;
    case DS_RECOVERING:
        return d->rec.kind == RK_START ? USK_SD_STATE_STARTING : USK_SD_STATE_RECOVERING;
    default:
        return USK_SD_STATE_FAILED;
    }
}

const char *sd_standby_state_name(const struct sd_dom *d)
{
    switch (d->sb.state) {
    case SB_NONE:
        return USK_SD_STANDBY_NONE;
    case SB_BOOTING:
        return USK_SD_STANDBY_BOOTING;
    case SB_HELD:
        return USK_SD_STANDBY_HELD;
    case SB_READY:
        return USK_SD_STANDBY_READY;
    case SB_FAILED:
        return USK_SD_STANDBY_FAILED;
    default:
        return "off";
    }
}

const char *sd_reason_name(int r)
{
    switch (r) {
    case SD_SHUT_POWEROFF:
        return "poweroff";
    case SD_SHUT_REBOOT:
        return "reboot";
    case SD_SHUT_SUSPEND:
        return "suspend";
    case SD_SHUT_CRASH:
        return "crash";
    case SD_SHUT_WATCHDOG:
        return "watchdog";
    default:
        return "unknown";
    }
}
