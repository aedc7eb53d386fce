/* sn_standby.c - a stream held open on the hot standby. While a program has
 * the stream's parameters set, the standby's backend has it OPENed with
 * them (a buffer shared, nothing written, never started), so that a
 * promotion only starts it: the OPEN - the backend mapping the buffer and
 * opening its PCM, about 5 ms on xensim - is out of the audio gap, and so is
 * the lag it would leave between the program's clock and the card (audio
 * the next failure would drop too). Only OPEN and CLOSE are ever issued
 * here: a standby plays nothing before it is promoted (schema.md, "The hot
 * standby's connection"). Its answers are checked as the live backend's;
 * an event, or an answer overdue, is the standby misbehaving. */
#define _GNU_SOURCE
#include "sn_stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void sb_reset(struct sn_stream *s)
{
    s->sb_be = SN_BE_CLOSED;
    s->sb_refused = false;
    memset(&s->sb_hw, 0, sizeof(s->sb_hw));
}

int sn_stream_standby_setup(struct sn_stream *s, xengntshr_handle *gs, xenevtchn_handle *xce,
                            uint32_t domid)
{
    sn_ring_teardown(&s->sb);
    sb_reset(s);
    return sn_ring_setup(&s->sb, gs, xce, domid);
}

void sn_stream_standby_teardown(struct sn_stream *s)
{
    sn_ring_teardown(&s->sb);
    sb_reset(s);
}

static void on_sb_rsp(void *arg, uint64_t tag, const struct xensnd_resp *rsp)
{
    struct sn_stream *s = arg;
    switch (SN_TAG_OP(tag)) {
    case XENSND_OP_OPEN:
        if (s->sb_be != SN_BE_OPENING)
            break; /* a CLOSE is behind it: its answer settles the state */
        if (rsp->status == 0) {
            s->sb_be = SN_BE_OPEN;
        } else {
            sn_stream_log(
                s, false,
                "standby refused OPEN (%u Hz, %u channels): status %d; the stream opens there "
                "at a promotion instead",
                s->sb_hw.rate, s->sb_hw.channels, rsp->status);
            s->sb_be = SN_BE_CLOSED;
            s->sb_refused = true;
        }
        break;
    case XENSND_OP_CLOSE:
        s->sb_be = SN_BE_CLOSED;
        break;
    default:
        break;
    }
}

/* A standby is never started: it has no position to report. */
static void on_sb_evt(void *arg, uint64_t position)
{
    (void)position;
    *(bool *)arg = true;
}

static bool sb_issue(struct sn_stream *s, struct xensnd_req *q, unsigned op, uint64_t now)
{
    q->operation = (uint8_t)op;
    return sn_ring_issue(&s->sb, q, SN_TAG(op, 0, 0), now) >= 0;
}

/* Open on the standby what the program has set up; close what it no longer has. */
static void reconcile(struct sn_stream *s, uint64_t now)
{
    bool want = s->shadow && s->have_params && s->client;
    bool same = sn_stream_same_hw(&s->sb_hw, &s->hw);
    struct xensnd_req q;
    if ((s->sb_be == SN_BE_OPEN || s->sb_be == SN_BE_OPENING) && (!want || !same)) {
        memset(&q, 0, sizeof(q));
        if (sb_issue(s, &q, XENSND_OP_CLOSE, now))
            s->sb_be = SN_BE_CLOSING;
        return;
    }
    if (s->sb_be != SN_BE_CLOSED || !want || (s->sb_refused && same) || !sn_ring_room(&s->sb))
        return;
    uint32_t data_sz;
    if (sn_stream_open_req(s, &s->sb, &q, &data_sz) < 0) {
        sn_stream_log(s, false, "standby: sharing a buffer of %u octets with domain %u: %m",
                      s->hw.buffer_frames * s->fb, s->sb.domid);
        s->sb_refused = true;
        s->sb_hw = s->hw;
        return;
    }
    sn_ring_events_reset(&s->sb);
    if (!sb_issue(s, &q, XENSND_OP_OPEN, now))
        return;
    s->sb_be = SN_BE_OPENING;
    s->sb_hw = s->hw;
    s->sb_refused = false;
}

int sn_stream_standby_service(struct sn_stream *s, uint64_t now, unsigned deadline_ms, char *why,
                              size_t len)
{
    if (!s->sb.bound)
        return 0;
    if (sn_ring_harvest(&s->sb, on_sb_rsp, s, why, len) < 0)
        return -1;
    bool evt = false;
    if (sn_ring_events(&s->sb, on_sb_evt, &evt, why, len) < 0)
        return -1;
    if (evt) {
        snprintf(why, len, "a position event from a standby that was never started");
        return -1;
    }
    uint64_t since;
    if (sn_ring_oldest(&s->sb, &since) && now >= since && now - since >= deadline_ms) {
        snprintf(why, len, "%s unanswered for %" PRIu64 " ms (deadline %u ms)",
                 s->sb_be == SN_BE_CLOSING ? "CLOSE" : "OPEN", now - since, deadline_ms);
        return -1;
    }
    reconcile(s, now);
    sn_ring_push(&s->sb);
    return 0;
}

unsigned sn_stream_standby_timeout(const struct sn_stream *s, uint64_t now, unsigned deadline_ms,
                                   unsigned cap)
{
    uint64_t since;
    if (!s->sb.bound || !sn_ring_oldest(&s->sb, &since))
        return cap;
    uint64_t due = since + deadline_ms, left = due > now ? due - now : 0;
    return left < cap ? (unsigned)left : cap;
}
