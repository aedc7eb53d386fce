/* sb_dispatch.c - one request, from its copy: checked, run, answered.
 * Anything refused gets -XEN_E* and a rate-limited log line, and touches
 * nothing outside the stream's own buffer.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <inttypes.h>

#include <xen/errno.h>

#include <string.h>

static const char *op_name(unsigned op)
{
    static const char *const n[] = {"OPEN",       "CLOSE", "READ",   "WRITE",   "SET_VOLUME",
                                    "GET_VOLUME", "MUTE",  "UNMUTE", "TRIGGER", "HW_PARAM_QUERY"};
    return op < sizeof(n) / sizeof(n[0]) ? n[op] : "unknown";
}

/* May the stream log one more query line? SB_QLOG_BUDGET a minute, then one
 * line saying the rest of the minute's are not logged. */
#define SB_QLOG_BUDGET 160
static bool query_log_ok(struct sb_stream *s)
{
    uint64_t now = be_now_ms();
    if (now - s->qlog_window_ms >= 60000) {
        s->qlog_window_ms = now;
        s->qlog_n = 0;
    }
    if (s->qlog_n == SB_QLOG_BUDGET)
        BE_LOG(s->d->be, "stream %u/%u: %u HW_PARAM_QUERY lines this minute: the rest not logged",
               s->pcm_idx, s->idx, SB_QLOG_BUDGET);
    return s->qlog_n++ < SB_QLOG_BUDGET;
}

static int refuse(struct sb_stream *s, const struct xensnd_req *req, int status, const char *why)
{
    if (req->operation == XENSND_OP_HW_PARAM_QUERY) {
        const struct xensnd_query_hw_param *q = &req->op.hw_param;
        if (query_log_ok(s))
            BE_LOG(s->d->be,
                   "stream %u/%u: HW_PARAM_QUERY formats %#" PRIx64 " rate %u-%u ch %u-%u "
                   "buffer %u-%u period %u-%u refused (%d): %s",
                   s->pcm_idx, s->idx, q->formats, q->rates.min, q->rates.max, q->channels.min,
                   q->channels.max, q->buffer.min, q->buffer.max, q->period.min, q->period.max,
                   status, why);
        return status;
    }
    BE_LOG_RL(s->d->be, "stream %u/%u: %s (op %u) id %u refused: %s", s->pcm_idx, s->idx,
              op_name(req->operation), req->operation, req->id, why);
    return status;
}

/* offset+length inside the open buffer, without overflow. */
static bool in_buffer(const struct sb_stream *s, uint32_t off, uint64_t len)
{
    return off <= s->buffer_sz && len <= (uint64_t)s->buffer_sz - off;
}

static int do_rw(struct sb_stream *s, const struct xensnd_req *req)
{
    const struct xensnd_rw_req *rw = &req->op.rw;
    bool wr = req->operation == XENSND_OP_WRITE;
    if (wr == s->capture)
        return refuse(s, req, -XEN_EINVAL,
                      wr ? "WRITE on a capture stream" : "READ on a playback stream");
    if (!in_buffer(s, rw->offset, rw->length))
        return refuse(s, req, -XEN_EINVAL, "offset+length past the buffer");
    if (rw->length % s->frame_bytes)
        return refuse(s, req, -XEN_EINVAL, "length not a whole number of frames");
    if (wr) {
        size_t n = sb_fifo_put(&s->pcm, s->buf + rw->offset, rw->length);
        sb_pcm_kick(s);
        if (n < rw->length)
            return refuse(s, req, -XEN_ENOSPC, "more queued than a buffer and a PCM hold");
        return 0;
    }
    size_t n = sb_fifo_get(&s->pcm, s->buf + rw->offset, rw->length);
    if (n < rw->length) {
        snd_pcm_format_set_silence(s->afmt, s->buf + rw->offset + n,
                                   (unsigned)((rw->length - n) / s->frame_bytes * s->channels));
        BE_LOG_RL(s->d->be, "stream %u/%u: READ id %u: %zu of %u octets captured, rest silence",
                  s->pcm_idx, s->idx, req->id, n, rw->length);
    }
    return 0;
}

/* SET_VOLUME/GET_VOLUME/MUTE/UNMUTE: one value per channel in the buffer. */
static int do_volume(struct sb_stream *s, const struct xensnd_req *req)
{
    const struct xensnd_rw_req *rw = &req->op.rw;
    bool vol = req->operation == XENSND_OP_SET_VOLUME || req->operation == XENSND_OP_GET_VOLUME;
    uint64_t need = (uint64_t)s->channels * (vol ? 4 : 1);
    if (rw->length < need || !in_buffer(s, rw->offset, need))
        return refuse(s, req, -XEN_EINVAL, "values for every channel not inside the buffer");
    uint8_t *p = s->buf + rw->offset;
    switch (req->operation) {
    case XENSND_OP_GET_VOLUME:
        memcpy(p, s->vol, need);
        return 0;
    case XENSND_OP_SET_VOLUME: {
        int32_t v[SNDC_MAX_CHANNELS];
        memcpy(v, p, need); /* once: the frontend may change it meanwhile */
        for (unsigned c = 0; c < s->channels; c++) {
            if (v[c] > 24000 || v[c] < -200000)
                return refuse(s, req, -XEN_EINVAL, "volume outside -200..+24 dB");
            if (v[c] && !sb_volume_supported(s->afmt))
                return refuse(s, req, -XEN_EOPNOTSUPP,
                              "software volume is not done in this sample format");
        }
        memcpy(s->vol, v, need);
        return 0;
    }
    default: {
        bool m = req->operation == XENSND_OP_MUTE;
        for (unsigned c = 0; c < s->channels; c++)
            if (((volatile uint8_t *)p)[c])
                s->mute[c] = m;
        return 0;
    }
    }
}

void sb_dispatch(struct sb_stream *s, const struct xensnd_req *req)
{
    struct xensnd_query_hw_param hw;
    const struct xensnd_query_hw_param *hwp = NULL;
    int st;
    unsigned op = req->operation;
    if (op == XENSND_OP_HW_PARAM_QUERY) {
        const struct xensnd_query_hw_param *q = &req->op.hw_param;
        st = sb_query(s, q, &hw);
        if (st == 0) {
            hwp = &hw;
            /* A frontend's hw rules are a dialogue: each question and answer
             * is logged (query_log_ok), to read a negotiation that fails. */
            if (query_log_ok(s))
                BE_LOG(s->d->be,
                       "stream %u/%u: HW_PARAM_QUERY formats %#" PRIx64 " rate %u-%u ch %u-%u "
                       "buffer %u-%u period %u-%u -> formats %#" PRIx64 " rate %u-%u ch %u-%u "
                       "buffer %u-%u period %u-%u",
                       s->pcm_idx, s->idx, q->formats, q->rates.min, q->rates.max, q->channels.min,
                       q->channels.max, q->buffer.min, q->buffer.max, q->period.min, q->period.max,
                       hw.formats, hw.rates.min, hw.rates.max, hw.channels.min, hw.channels.max,
                       hw.buffer.min, hw.buffer.max, hw.period.min, hw.period.max);
        } else {
            refuse(s, req, st, "no configuration left in the ranges asked for");
        }
    } else if (op == XENSND_OP_OPEN) {
        st =
            s->open ? refuse(s, req, -XEN_EBUSY, "stream already open") : sb_open(s, &req->op.open);
    } else if (op > XENSND_OP_HW_PARAM_QUERY) {
        st = refuse(s, req, -XEN_EOPNOTSUPP, "unknown operation");
    } else if (!s->open) {
        st = refuse(s, req, -XEN_EINVAL, "stream not open");
    } else if (op == XENSND_OP_CLOSE) {
        sb_close(s);
        st = 0;
    } else if (op == XENSND_OP_READ || op == XENSND_OP_WRITE) {
        st = do_rw(s, req);
    } else if (op == XENSND_OP_TRIGGER) {
        st = sb_pcm_trigger(s, req->op.trigger.type);
        if (st)
            refuse(s, req, st, "trigger type unknown or not possible in this state");
    } else {
        st = do_volume(s, req);
    }
    sb_respond(s, req, st, hwp);
}
