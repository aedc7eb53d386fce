/* status.c - what `shadowctl status` and `shadowctl history` print: the
 * driver domains, their devices and recoveries, as a table or as JSON. */
#define _GNU_SOURCE
#include "status.h"

#include "budget.h"
#include "dom.h"
#include "history.h"
#include "hotsb.h"
#include "instance.h"
#include "log.h"
#include "record.h"

#include "sbuf.h"
#include "sd_text.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static unsigned paired(const struct sd_dom *d)
{
    unsigned n = 0;
    for (unsigned i = 0; i < d->ndevs; i++)
        n += d->devs[i]->paired;
    return n;
}

void sd_status_text(struct sd *sd, struct sbuf *b)
{
    uint64_t now = sd_now();
    sbuf_printf(b, "%-12s %-7s %-10s %5s %7s %6s %8s %10s  %s\n", "DOMAIN", "DRIVER", "STATE",
                "DOMID", "DEVICES", "GUESTS", "RESTARTS", "RECOVERIES", "LAST RECOVERY (ms)");
    for (unsigned i = 0; i < sd->ndoms; i++) {
        struct sd_dom *d = &sd->doms[i];
        char domid[16];
        snprintf(domid, sizeof(domid), d->srv.domid ? "%u" : "-", d->srv.domid);
        sbuf_printf(b, "%-12s %-7s %-10s %5s %7u %6u %8llu %10llu  %s\n", d->conf->name,
                    sd_driver_name(d->conf->driver), sd_state_name(d), domid, paired(d),
                    sd_record_guests(d, NULL), (unsigned long long)d->n_restarts,
                    (unsigned long long)d->n_recoveries,
                    d->last_recovery[0] ? d->last_recovery : "-");
    }
    for (unsigned i = 0; i < sd->ndoms; i++) {
        struct sd_dom *d = &sd->doms[i];
        sbuf_printf(b, "\n%s:", d->conf->name);
        if (d->conf->heartbeat_timeout_ms && d->srv.domid)
            sbuf_printf(b, " heartbeat %s", d->srv.hb.seen ? "" : "not seen yet");
        if (d->conf->heartbeat_timeout_ms && d->srv.domid && d->srv.hb.seen)
            sbuf_printf(b, "%llu ms ago", (unsigned long long)(now - d->srv.hb.change_ms));
        sbuf_printf(b, "; restarts in window %u of %u; backoff streak %u",
                    sd_budget_count(&d->srv.budget, d->conf, now), d->conf->restart_budget,
                    d->srv.budget.streak);
        char sn[80];
        if (d->slot) /* after a promotion the serving domain has the standby's name */
            sbuf_printf(b, "; serving domain named %s", sd_inst_name(&d->srv, sn, sizeof(sn)));
        sbuf_printf(b, "\n");
        if (d->state == DS_RECOVERING)
            sbuf_printf(b,
                        "  recovery %u (%s): phase %s, attempt %u, old domain %u, new %u, "
                        "%llu ms so far\n    reason: %s\n",
                        d->rec.id, sd_kind_name(d->rec.kind), sd_phase_name(d->rec.phase),
                        d->rec.attempts, d->rec.old_domid, d->rec.new_domid,
                        (unsigned long long)(now - d->rec.t_evidence), d->rec.reason);
        if (d->state == DS_FAILED)
            sbuf_printf(b, "  FAILED, left down: %s\n", d->srv.error);
        if (d->sb.state != SB_OFF) {
            char nm[80], id[16];
            snprintf(id, sizeof(id), d->sb.inst.domid ? "domain %u" : "no domain",
                     d->sb.inst.domid);
            unsigned up, att = sd_hot_count(d, d->sb.inst.domid, &up);
            sbuf_printf(b,
                        "  standby %s: %s, %s; %u devices attached, %u connected (hot); %llu "
                        "promotions, %llu replacements%s%s\n",
                        sd_inst_name(&d->sb.inst, nm, sizeof(nm)), sd_standby_state_name(d), id,
                        att, up, (unsigned long long)d->sb.n_promotions,
                        (unsigned long long)d->sb.n_replacements,
                        d->sb.inst.error[0] ? "; last: " : "", d->sb.inst.error);
            if (d->reap.inst.domid)
                sbuf_printf(b, "  failed domain %u fenced, being destroyed\n", d->reap.inst.domid);
        }
        for (unsigned k = 0; k < d->ndevs; k++) {
            const struct sd_dev *v = d->devs[k];
            char hot[96] = "";
            if (v->live_slot > 0)
                snprintf(hot, sizeof(hot), ", live in %s", sd_slot_name(v->live_slot));
            if (v->hot_slot > 0) {
                size_t l = strlen(hot);
                snprintf(hot + l, sizeof(hot) - l, ", standby connection in %s%s",
                         sd_slot_name(v->hot_slot), v->hot_up ? "" : " (not Connected yet)");
            }
            sbuf_printf(b, "  %s %u of guest %u  %s  %s, %u toolstack keys, generation %llu%s\n",
                        v->type, v->devid, v->fe, v->fe_path, v->paired ? "recorded" : "unpaired",
                        v->nkv, (unsigned long long)v->generation, hot);
        }
    }
}

static void json_phases(struct sbuf *b, const struct sd_hist *h)
{
    sbuf_printf(b,
                "{\"id\":%u,\"kind\":\"%s\",\"ok\":%s,\"detect_ms\":%llu,\"restart_ms\":%llu,"
                "\"rewire_ms\":%llu,\"reconnect_ms\":%llu,\"total_ms\":%llu,"
                "\"old_domid\":%u,\"new_domid\":%u,\"attempts\":%u,\"devices\":%u,"
                "\"reconnected\":%u,\"warm\":%s,\"hot_devices\":%u,\"time\":%llu,\"reason\":",
                h->id, sd_kind_name(h->kind), h->ok ? "true" : "false",
                (unsigned long long)h->detect_ms, (unsigned long long)h->restart_ms,
                (unsigned long long)h->rewire_ms, (unsigned long long)h->reconnect_ms,
                (unsigned long long)h->total_ms, h->old_domid, h->new_domid, h->attempts,
                h->devices, h->reconnected, h->warm ? "true" : "false", h->hot,
                (unsigned long long)h->wall);
    sbuf_json(b, h->reason);
    sbuf_printf(b, ",\"outcome\":");
    sbuf_json(b, h->outcome);
    sbuf_printf(b, ",\"domain\":");
    sbuf_json(b, h->domain);
    sbuf_printf(b, "}");
}

void sd_status_json(struct sd *sd, struct sbuf *b)
{
    uint64_t now = sd_now();
    sbuf_printf(b, "{\"uptime_ms\":%llu,\"domains\":[", (unsigned long long)(now - sd->started_ms));
    for (unsigned i = 0; i < sd->ndoms; i++) {
        struct sd_dom *d = &sd->doms[i];
        sbuf_printf(b, "%s{\"name\":", i ? "," : "");
        sbuf_json(b, d->conf->name);
        sbuf_printf(b, ",\"driver\":\"%s\",\"state\":\"%s\",\"domid\":%u,",
                    sd_driver_name(d->conf->driver), sd_state_name(d), d->srv.domid);
        /* interval_ms: the last gap between two heartbeats, 0 until two are seen. */
        sbuf_printf(b,
                    "\"heartbeat\":{\"checked\":%s,\"seen\":%s,\"age_ms\":%lld,"
                    "\"interval_ms\":%llu},",
                    d->conf->heartbeat_timeout_ms ? "true" : "false",
                    d->srv.hb.seen ? "true" : "false",
                    d->srv.hb.seen ? (long long)(now - d->srv.hb.change_ms) : -1LL,
                    (unsigned long long)d->srv.hb.interval_ms);
        sbuf_printf(b,
                    "\"restarts\":%llu,\"restarts_in_window\":%u,\"restart_budget\":%u,"
                    "\"streak\":%u,\"recoveries\":%llu,\"failures\":%llu,"
                    "\"reports_accepted\":%llu,\"reports_ignored\":%llu,\"guests\":%u,",
                    (unsigned long long)d->n_restarts,
                    sd_budget_count(&d->srv.budget, d->conf, now), d->conf->restart_budget,
                    d->srv.budget.streak, (unsigned long long)d->n_recoveries,
                    (unsigned long long)d->n_failures, (unsigned long long)d->n_reports_accepted,
                    (unsigned long long)d->n_reports_ignored, sd_record_guests(d, NULL));
        sbuf_printf(b, "\"error\":");
        if (d->state == DS_FAILED)
            sbuf_json(b, d->srv.error);
        else
            sbuf_printf(b, "null");
        char nm[80];
        sbuf_printf(b, ",\"domain_name\":");
        sbuf_json(b, sd_inst_name(&d->srv, nm, sizeof(nm)));
        sbuf_printf(b, ",\"standby\":");
        if (d->sb.state == SB_OFF) {
            sbuf_printf(b, "null");
        } else {
            const struct sd_standby *sb = &d->sb;
            sbuf_printf(b, "{\"state\":\"%s\",\"domid\":%u,\"name\":", sd_standby_state_name(d),
                        sb->inst.domid);
            sbuf_json(b, sd_inst_name(&d->sb.inst, nm, sizeof(nm)));
            unsigned up, att = sd_hot_count(d, d->sb.inst.domid, &up);
            sbuf_printf(b,
                        ",\"heartbeat_age_ms\":%lld,\"promotions\":%llu,\"replacements\":%llu,"
                        "\"streak\":%u,\"attached\":%u,\"hot_devices\":%u,\"fenced_domid\":%u,"
                        "\"error\":",
                        sb->state == SB_READY ? (long long)(now - sb->inst.hb.change_ms) : -1LL,
                        (unsigned long long)sb->n_promotions,
                        (unsigned long long)sb->n_replacements, sb->inst.budget.streak, att, up,
                        d->reap.inst.domid);
            if (sb->inst.error[0])
                sbuf_json(b, sb->inst.error);
            else
                sbuf_printf(b, "null");
            sbuf_printf(b, "}");
        }
        sbuf_printf(b, ",\"recovery\":");
        if (d->state == DS_RECOVERING) {
            sbuf_printf(b,
                        "{\"id\":%u,\"kind\":\"%s\",\"phase\":\"%s\",\"old_domid\":%u,"
                        "\"new_domid\":%u,\"attempts\":%u,\"elapsed_ms\":%llu,\"reason\":",
                        d->rec.id, sd_kind_name(d->rec.kind), sd_phase_name(d->rec.phase),
                        d->rec.old_domid, d->rec.new_domid, d->rec.attempts,
                        (unsigned long long)(now - d->rec.t_evidence));
            sbuf_json(b, d->rec.reason);
            sbuf_printf(b, "}");
        } else {
            sbuf_printf(b, "null");
        }
        sbuf_printf(b, ",\"last_recovery\":");
        const struct sd_hist *h = sd_hist_last(&sd->hist, d->conf->name);
        if (h)
            json_phases(b, h);
        else
            sbuf_printf(b, "null");
        sbuf_printf(b, ",\"devices\":[");
        for (unsigned k = 0; k < d->ndevs; k++) {
            const struct sd_dev *v = d->devs[k];
            sbuf_printf(b, "%s{\"type\":", k ? "," : "");
            sbuf_json(b, v->type);
            sbuf_printf(b, ",\"guest\":%u,\"devid\":%u,\"frontend\":", v->fe, v->devid);
            sbuf_json(b, v->fe_path);
            sbuf_printf(b, ",\"recorded\":%s,\"generation\":%llu,", v->paired ? "true" : "false",
                        (unsigned long long)v->generation);
            /* the hot standby's connection: where the live one is, the one held */
            const char *live = sd_slot_name(v->live_slot), *held = sd_slot_name(v->hot_slot);
            sbuf_printf(b, "\"live_slot\":%s%s%s,\"standby_slot\":%s%s%s,\"standby_connected\":%s,",
                        live ? "\"" : "", live ? live : "null", live ? "\"" : "", held ? "\"" : "",
                        held ? held : "null", held ? "\"" : "",
                        v->hot_up && held ? "true" : "false");
            sbuf_printf(b, "\"keys\":{");
            for (unsigned j = 0; j < v->nkv; j++) {
                sbuf_printf(b, "%s", j ? "," : "");
                sbuf_json(b, v->kv[j].k);
                sbuf_printf(b, ":");
                sbuf_json(b, v->kv[j].v);
            }
            sbuf_printf(b, "}}");
        }
        sbuf_printf(b, "]}");
    }
    sbuf_printf(b, "]}\n");
}

void sd_history_text(struct sd *sd, struct sbuf *b, bool json)
{
    if (json) {
        sbuf_printf(b, "[");
        for (unsigned i = 0; i < sd->hist.n; i++) {
            sbuf_printf(b, "%s", i ? "," : "");
            json_phases(b, sd_hist_at(&sd->hist, i));
        }
        sbuf_printf(b, "]\n");
        return;
    }
    if (!sd->hist.n)
        sbuf_printf(b, "no recoveries yet\n");
    for (unsigned i = 0; i < sd->hist.n; i++) {
        const struct sd_hist *h = sd_hist_at(&sd->hist, i);
        char when[32], hot[48] = "";
        if (h->warm)
            snprintf(hot, sizeof(hot), ", %u switched hot", h->hot);
        time_t t = (time_t)h->wall;
        struct tm tm;
        if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
            snprintf(when, sizeof(when), "?");
        sbuf_printf(b,
                    "%s %s #%u %s%s %s: detect %llu + restart %llu + rewire %llu + reconnect %llu "
                    "= %llu ms; domain %u -> %u, %u restart(s), %u/%u devices back%s\n"
                    "    why: %s\n    outcome: %s\n",
                    when, h->domain, h->id, sd_kind_name(h->kind), h->warm ? " (warm)" : "",
                    h->ok ? "ok" : "FAILED", (unsigned long long)h->detect_ms,
                    (unsigned long long)h->restart_ms, (unsigned long long)h->rewire_ms,
                    (unsigned long long)h->reconnect_ms, (unsigned long long)h->total_ms,
                    h->old_domid, h->new_domid, h->attempts, h->reconnected, h->devices, hot,
                    h->reason, h->outcome);
    }
}
