/* xs_conn.c - client connections: reading requests, dispatching them,
 * queueing replies and watch events, writing them out. */
#define _GNU_SOURCE
#include "xs_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "evloop.h"
#include "xs_map.h"
#include "xs_ops.h"
#include "xs_trans.h"
#include "xs_watch.h"

#define MSGS_PER_WAKEUP 64

struct xs_out {
    struct xs_out *next;
    size_t len, off;
    bool event;
    uint64_t deadline_ms; /* events of unprivileged domains; 0: none */
    char *key;            /* "path\ntoken" of a non-special event, for duplicates */
    char buf[];           /* header and payload */
};

static struct evloop *xs_loop;
static struct xs_conn *conns;
static struct xs_conn *zombies;
static uint64_t reap_timer;
/* Queued non-special events, per connection, for the duplicate check. */
static struct xs_map *pending;

#define F_PRIV  1u /* privileged domains only (XS_FLAG_PRIV) */
#define F_NOTID 2u /* tx_id ignored (XS_FLAG_NOTID) */

typedef int handler_fn(struct xs_conn *c, const struct xs_req *r);
static const struct {
    handler_fn *fn;
    unsigned flags;
} handlers[XS_TYPE_COUNT] = {
    [XS_CONTROL] = {xs_h_control, F_PRIV},
    [XS_DIRECTORY] = {xs_h_directory, 0},
    [XS_READ] = {xs_h_read, 0},
    [XS_GET_PERMS] = {xs_h_get_perms, 0},
    [XS_WATCH] = {xs_h_watch, F_NOTID},
    [XS_UNWATCH] = {xs_h_unwatch, F_NOTID},
    [XS_TRANSACTION_START] = {xs_h_transaction_start, 0},
    [XS_TRANSACTION_END] = {xs_h_transaction_end, 0},
    [XS_INTRODUCE] = {xs_h_introduce, F_PRIV},
    [XS_RELEASE] = {xs_h_release, F_PRIV},
    [XS_GET_DOMAIN_PATH] = {xs_h_get_domain_path, 0},
    [XS_WRITE] = {xs_h_write, 0},
    [XS_MKDIR] = {xs_h_mkdir, 0},
    [XS_RM] = {xs_h_rm, 0},
    [XS_SET_PERMS] = {xs_h_set_perms, 0},
    [XS_IS_DOMAIN_INTRODUCED] = {xs_h_is_domain_introduced, F_PRIV},
    [XS_RESUME] = {xs_h_resume, F_PRIV},
    [XS_SET_TARGET] = {xs_h_set_target, F_PRIV},
    [XS_RESET_WATCHES] = {xs_h_reset_watches, 0},
    [XS_DIRECTORY_PART] = {xs_h_directory_part, 0},
};

void xs_conn_init(struct evloop *l)
{
    xs_loop = l;
}

struct xs_conn *xs_conn_list(void)
{
    return conns;
}

static void reap(void *opaque)
{
    (void)opaque;
    reap_timer = 0;
    while (zombies) {
        struct xs_conn *c = zombies;
        zombies = c->next;
        free(c);
    }
}

static void free_out(struct xs_out *o)
{
    if (o->key && pending)
        xs_map_del(pending, o->key);
    free(o->key);
    free(o);
}

void xs_conn_close(struct xs_conn *c)
{
    if (c->closed)
        return;
    c->closed = true;
    evloop_fd_delete(xs_loop, c->fd);
    close(c->fd);
    xs_watch_drop_all(c);
    xs_tx_drop_all(c);
    while (c->out_head) {
        struct xs_out *o = c->out_head;
        c->out_head = o->next;
        free_out(o);
    }
    c->out_tail = NULL;
    for (struct xs_conn **pp = &conns; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    /* Callers up the stack may still hold c: free it after this round. */
    c->next = zombies;
    zombies = c;
    if (!reap_timer)
        reap_timer = evloop_timer_create(xs_loop, 0, reap, NULL);
}

void xs_conn_close_domain(unsigned domid)
{
    struct xs_conn *c = conns;
    while (c) {
        struct xs_conn *next = c->next;
        if (c->who.domid == domid)
            xs_conn_close(c);
        c = next;
    }
}

void xs_conn_fini(void)
{
    while (conns)
        xs_conn_close(conns);
    if (reap_timer)
        evloop_timer_delete(xs_loop, reap_timer);
    reap(NULL);
    xs_map_free(pending);
    pending = NULL;
}

static void update_mask(struct xs_conn *c)
{
    if (c->closed)
        return;
    uint32_t want = 0;
    if (c->out_replies < XS_OUTSTANDING_MAX)
        want |= EPOLLIN;
    if (c->out_head)
        want |= EPOLLOUT;
    if (want != c->events_mask && evloop_fd_modify(xs_loop, c->fd, want) == 0)
        c->events_mask = want;
}

/* Drop unsent events that have waited too long (check_event_timeout). Events
 * are queued in deadline order, so stop at the first one still in time. */
static void purge_expired(struct xs_conn *c, uint64_t now)
{
    struct xs_out **pp = &c->out_head;
    struct xs_out *prev = NULL;
    while (*pp) {
        struct xs_out *o = *pp;
        if (!o->event || !o->deadline_ms || o->off) {
            prev = o;
            pp = &o->next;
            continue;
        }
        if (o->deadline_ms > now)
            break;
        *pp = o->next;
        if (c->out_tail == o)
            c->out_tail = prev;
        c->out_bytes -= o->len;
        free_out(o);
    }
}

static void flush(struct xs_conn *c)
{
    if (!xs_who_priv(&c->who))
        purge_expired(c, evloop_now_ms());
    while (c->out_head) {
        struct xs_out *o = c->out_head;
        ssize_t k = send(c->fd, o->buf + o->off, o->len - o->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            xs_conn_close(c);
            return;
        }
        o->off += (size_t)k;
        if (o->off < o->len)
            break;
        c->out_head = o->next;
        if (!c->out_head)
            c->out_tail = NULL;
        c->out_bytes -= o->len;
        if (!o->event)
            c->out_replies--;
        free_out(o);
    }
}

static struct xs_out *new_msg(uint32_t type, uint32_t req_id, uint32_t tx_id, const void *a,
                              size_t alen, const void *b, size_t blen)
{
    struct xsd_sockmsg h = {
        .type = type, .req_id = req_id, .tx_id = tx_id, .len = (uint32_t)(alen + blen)};
    struct xs_out *o = calloc(1, sizeof(*o) + sizeof(h) + alen + blen);
    if (!o)
        return NULL;
    o->len = sizeof(h) + alen + blen;
    memcpy(o->buf, &h, sizeof(h));
    if (alen)
        memcpy(o->buf + sizeof(h), a, alen);
    if (blen)
        memcpy(o->buf + sizeof(h) + alen, b, blen);
    return o;
}

static void enqueue(struct xs_conn *c, struct xs_out *o)
{
    o->next = NULL;
    if (c->out_tail)
        c->out_tail->next = o;
    else
        c->out_head = o;
    c->out_tail = o;
    c->out_bytes += o->len;
    update_mask(c);
}

void xs_reply(struct xs_conn *c, const struct xs_req *r, const void *data, size_t len)
{
    if (c->closed)
        return;
    if (len > XENSTORE_PAYLOAD_MAX) {
        xs_reply_error(c, r, E2BIG);
        return;
    }
    struct xs_out *o = new_msg(r->hdr.type, r->hdr.req_id, r->hdr.tx_id, data, len, NULL, 0);
    if (!o) {
        xs_conn_close(c); /* cannot stay in step with the client */
        return;
    }
    c->out_replies++;
    enqueue(c, o);
}

void xs_reply_ok(struct xs_conn *c, const struct xs_req *r)
{
    xs_reply(c, r, "OK", sizeof("OK"));
}

void xs_reply_error(struct xs_conn *c, const struct xs_req *r, int err)
{
    size_t i, n = sizeof(xsd_errors) / sizeof(xsd_errors[0]);
    for (i = 0; i < n && xsd_errors[i].errnum != err; i++)
        ;
    if (i == n)
        i = 0; /* untranslatable: EINVAL, as send_error() does */
    const char *s = xsd_errors[i].errstring;
    if (c->closed)
        return;
    struct xs_out *o = new_msg(XS_ERROR, r->hdr.req_id, r->hdr.tx_id, s, strlen(s) + 1, NULL, 0);
    if (!o) {
        xs_conn_close(c);
        return;
    }
    c->out_replies++;
    enqueue(c, o);
}

void xs_conn_event(struct xs_conn *c, const char *path, const char *token)
{
    if (c->closed)
        return;
    size_t plen = strlen(path) + 1, tlen = strlen(token) + 1;
    if (plen + tlen > XENSTORE_PAYLOAD_MAX)
        return; /* over-long events are not sent */
    uint64_t now = evloop_now_ms();
    bool unpriv = !xs_who_priv(&c->who);
    if (unpriv)
        purge_expired(c, now);
    if (c->out_bytes + sizeof(struct xsd_sockmsg) + plen + tlen > XS_OUT_MAX)
        return;
    char *key = NULL;
    if (path[0] != '@') {
        /* An identical event still queued: drop this one. */
        if (!pending && !(pending = xs_map_new()))
            return;
        if (asprintf(&key, "%p\n%s\n%s", (void *)c, path, token) < 0)
            return;
        if (xs_map_get(pending, key)) {
            free(key);
            return;
        }
    }
    struct xs_out *o = new_msg(XS_WATCH_EVENT, 0, 0, path, plen, token, tlen);
    if (!o || (key && xs_map_put(pending, key, o))) {
        free(o);
        free(key);
        return;
    }
    o->event = true;
    o->key = key;
    o->deadline_ms = unpriv ? now + XS_EVENT_TIMEOUT_MS : 0;
    enqueue(c, o);
}

const char *xs_req_onearg(const struct xs_req *r)
{
    if (!r->len || memchr(r->body, 0, r->len) != r->body + r->len - 1)
        return NULL;
    return r->body;
}

unsigned xs_req_count(const struct xs_req *r)
{
    unsigned n = 0;
    for (unsigned i = 0; i < r->len; i++)
        n += r->body[i] == '\0';
    return n;
}

unsigned xs_req_strings(const struct xs_req *r, const char **vec, unsigned n)
{
    unsigned i = 0, off = 0;
    while (off < r->len) {
        const char *nul = memchr(r->body + off, 0, r->len - off);
        if (!nul)
            break;
        if (i < n)
            vec[i] = r->body + off;
        i++;
        off = (unsigned)(nul - r->body) + 1;
    }
    return i;
}

static void process(struct xs_conn *c)
{
    c->in_buf[c->in_hdr.len] = '\0';
    struct xs_req r = {.hdr = c->in_hdr, .body = c->in_buf, .len = c->in_hdr.len};
    uint32_t type = r.hdr.type;
    if (type >= XS_TYPE_COUNT || !handlers[type].fn) {
        xs_reply_error(c, &r, ENOSYS);
        return;
    }
    if ((handlers[type].flags & F_PRIV) && !xs_who_priv(&c->who)) {
        xs_reply_error(c, &r, EACCES);
        return;
    }
    struct xs_tx *tx = NULL;
    if (!(handlers[type].flags & F_NOTID) && r.hdr.tx_id) {
        tx = xs_tx_lookup(c, r.hdr.tx_id);
        if (!tx) {
            xs_reply_error(c, &r, ENOENT);
            return;
        }
    }
    c->who.tx = tx;
    int err = handlers[type].fn(c, &r);
    c->who.tx = NULL;
    if (err)
        xs_reply_error(c, &r, err);
}

/* Read and process requests until the socket is drained, the connection is
 * paused for unsent replies, or this round's share is used. */
static void conn_read(struct xs_conn *c)
{
    for (int n = 0; n < MSGS_PER_WAKEUP && !c->closed; n++) {
        if (c->out_replies >= XS_OUTSTANDING_MAX)
            return;
        char *dst;
        size_t want;
        if (!c->in_body) {
            dst = (char *)&c->in_hdr + c->in_used;
            want = sizeof(c->in_hdr) - c->in_used;
        } else {
            dst = c->in_buf + c->in_used;
            want = c->in_hdr.len - c->in_used;
        }
        if (want) {
            ssize_t k = recv(c->fd, dst, want, MSG_DONTWAIT);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return;
            if (k <= 0) {
                xs_conn_close(c); /* EOF or error: a half-sent message is dropped */
                return;
            }
            c->in_used += (unsigned)k;
            if ((size_t)k < want)
                continue;
        }
        if (!c->in_body) {
            if (c->in_hdr.len > XENSTORE_PAYLOAD_MAX) {
                fprintf(stderr, "xensim xenstored: dom%u client tried to feed us %u bytes\n",
                        c->who.domid, c->in_hdr.len);
                xs_conn_close(c);
                return;
            }
            c->in_body = true;
            c->in_used = 0;
            if (c->in_hdr.len)
                continue;
        }
        c->in_body = false;
        c->in_used = 0;
        process(c);
    }
}

static void conn_cb(void *opaque, int fd, uint32_t events)
{
    struct xs_conn *c = opaque;
    (void)fd;
    if (c->closed)
        return;
    if (events & (EPOLLERR | EPOLLHUP)) {
        xs_conn_close(c); /* the client is gone, as xenstored drops it on POLLHUP */
        return;
    }
    if (events & EPOLLOUT)
        flush(c);
    if (!c->closed && (events & EPOLLIN))
        conn_read(c);
    if (!c->closed && c->out_head)
        flush(c);
    update_mask(c);
}

int xs_conn_new(int fd, unsigned domid)
{
    if (domid != 0) {
        unsigned n = 0;
        for (struct xs_conn *k = conns; k; k = k->next)
            n += k->who.domid == domid;
        if (n >= XS_CONNS_PER_DOMAIN) {
            static unsigned refused;
            if (refused++ % 100 == 0)
                fprintf(stderr,
                        "xensim xenstored: dom%u holds %u connections, the most a domain may: "
                        "refusing another (%u refused so far)\n",
                        domid, n, refused);
            close(fd);
            errno = EMFILE;
            return -1;
        }
    }
    struct xs_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    c->who.domid = domid;
    c->events_mask = EPOLLIN;
    if (evloop_fd_create(xs_loop, fd, EPOLLIN, conn_cb, c) < 0) {
        close(fd);
        free(c);
        return -1;
    }
    struct xs_conn **pp = &conns; /* in connection order, as xenstored keeps them */
    while (*pp)
        pp = &(*pp)->next;
    *pp = c;
    return 0;
}
