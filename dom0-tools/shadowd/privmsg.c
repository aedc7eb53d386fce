/* privmsg.c - the shape of a message between shadowd and shadowd-priv
 * (privmsg.h): what each side checks before it looks at one. What a request
 * may do (which domain, which name) is shadowd-priv's (privcheck.c). */
#define _GNU_SOURCE
#include "privmsg.h"

#include "conf.h"
#include "drv.h"
#include "sd_text.h"

#include <stdio.h>
#include <string.h>

static const char *const type_names[SD_PRIV_TYPES] = {
    [SD_PRIV_FIND] = "find",       [SD_PRIV_INFO] = "info",       [SD_PRIV_CREATE] = "create",
    [SD_PRIV_DESTROY] = "destroy", [SD_PRIV_PAUSE] = "pause",     [SD_PRIV_CRASH] = "crash",
    [SD_PRIV_WATCH] = "watch",     [SD_PRIV_UNWATCH] = "unwatch", [SD_PRIV_LOOK] = "look",
    [SD_PRIV_SETTLE] = "settle",   [SD_PRIV_UNPAUSE] = "unpause", [SD_PRIV_HELLO] = "hello",
    [SD_PRIV_REPLY] = "reply",     [SD_PRIV_DONE] = "done",       [SD_PRIV_CHANGED] = "changed",
};

const char *sd_privmsg_type_name(uint32_t type)
{
    return type > 0 && type < SD_PRIV_TYPES ? type_names[type] : "?";
}

static bool all_zero(const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i])
            return false;
    return true;
}

/* A NUL-terminated string with nothing but zeros after its NUL. */
static bool str_ok(const char *s, size_t len)
{
    const char *nul = memchr(s, 0, len);
    return nul && all_zero(nul, len - (size_t)(nul - s));
}

static bool domid_ok(uint32_t domid)
{
    return domid >= 1 && domid <= SD_PRIV_DOMMAX;
}

static bool kind_ok(uint32_t kind)
{
    return kind > SD_DRIVER_NONE && kind < SD_DRIVER_KINDS;
}

static int bad(char *why, size_t len, const char *what)
{
    snprintf(why, len, "%s", what);
    return -1;
}

/* A LOOK's list: nlook domids, each alone in its entry; the rest zero. */
static int check_look(const struct sd_privmsg *m, char *why, size_t len)
{
    if (m->domid || !all_zero(m->name, sizeof(m->name)))
        return bad(why, len, "a domid or a name beside the look's list");
    if (m->nlook < 1 || m->nlook > SD_PRIV_LOOKMAX)
        return bad(why, len, "not 1..16 domains to look at");
    for (uint32_t i = 0; i < SD_PRIV_LOOKMAX; i++) {
        const struct sd_privlook *l = &m->look[i];
        bool ok = i < m->nlook
                      ? domid_ok(l->domid) && !l->run && !l->reason && !l->zero && !l->shutdown_ms
                      : all_zero(l, sizeof(*l));
        if (!ok)
            return bad(why, len, "a look entry out of range or with a state set");
    }
    return 0;
}

/* Requests: shadowd -> shadowd-priv. */
static int check_request(const struct sd_privmsg *m, char *why, size_t len)
{
    bool named = m->type == SD_PRIV_FIND || m->type == SD_PRIV_CREATE;
    if (!kind_ok(m->kind))
        return bad(why, len, "not a driver kind");
    if (m->rc || m->err_no || m->op || !all_zero(&m->st, sizeof(m->st)) ||
        !all_zero(m->err, sizeof(m->err)))
        return bad(why, len, "a field a request does not use is set");
    if (m->type == SD_PRIV_LOOK) {
        if (check_look(m, why, len) < 0)
            return -1;
    } else if (m->nlook || !all_zero(m->look, sizeof(m->look))) {
        return bad(why, len, "a look list in a request other than look");
    } else if (named) {
        if (m->domid)
            return bad(why, len, "a domid in a request by name");
        if (!sd_valid_name(m->name))
            return bad(why, len, "the name is not a valid domain name");
    } else {
        if (!domid_ok(m->domid))
            return bad(why, len, "domid out of range (1..32751)");
        if (!all_zero(m->name, sizeof(m->name)))
            return bad(why, len, "a name in a request by domid");
    }
    if (m->type == SD_PRIV_CREATE) {
        if (!sd_valid_name(m->dom))
            return bad(why, len, "the domain is not a valid domain name");
    } else if (!all_zero(m->dom, sizeof(m->dom))) {
        return bad(why, len, "a domain in a request other than create");
    }
    return 0;
}

/* shadowd-priv -> shadowd. */
static int check_notice(const struct sd_privmsg *m, char *why, size_t len)
{
    if (!all_zero(m->dom, sizeof(m->dom)) || !all_zero(m->name, sizeof(m->name)))
        return bad(why, len, "a name in a message from shadowd-priv");
    switch (m->type) {
    case SD_PRIV_HELLO:
        if (m->rc != 0 && m->rc != -1)
            return bad(why, len, "hello: rc is not 0 or -1");
        return 0;
    case SD_PRIV_REPLY:
        if (m->rc != -1 && m->rc != SD_DRV_DONE && m->rc != SD_DRV_PENDING)
            return bad(why, len, "reply: rc is not -1, 0 or 1");
        if (m->domid > SD_PRIV_DOMMAX || m->st.run > SD_RUN_GONE ||
            !str_ok(m->st.name, sizeof(m->st.name)))
            return bad(why, len, "reply: domid or state out of range");
        if (m->nlook > SD_PRIV_LOOKMAX)
            return bad(why, len, "reply: more than 16 looks");
        for (uint32_t i = 0; i < m->nlook; i++)
            if (m->look[i].domid > SD_PRIV_DOMMAX || m->look[i].run > SD_RUN_GONE ||
                m->look[i].zero)
                return bad(why, len, "reply: a look's domid or state out of range");
        return 0;
    case SD_PRIV_DONE:
        if (m->op != SD_OP_CREATE && m->op != SD_OP_DESTROY)
            return bad(why, len, "done: not an operation");
        if (m->rc != 0 && m->rc != -1)
            return bad(why, len, "done: rc is not 0 or -1");
        if (m->domid > SD_PRIV_DOMMAX || (m->op == SD_OP_CREATE && m->rc == 0 && !m->domid))
            return bad(why, len, "done: domid out of range");
        return 0;
    case SD_PRIV_CHANGED:
        if (!kind_ok(m->kind) || !domid_ok(m->domid))
            return bad(why, len, "changed: kind or domid out of range");
        return 0;
    default:
        return bad(why, len, "not a type shadowd-priv sends");
    }
}

int sd_privmsg_check(const struct sd_privmsg *m, ssize_t len, bool from_priv, char *why,
                     size_t whylen)
{
    char w[96];
    if (len != (ssize_t)sizeof(*m)) {
        snprintf(why, whylen, "%zd bytes, not %zu", len, sizeof(*m));
        return -1;
    }
    if ((m->flags & ~SD_PRIV_F_BOOST) || (m->flags && (from_priv || m->type != SD_PRIV_CREATE)) ||
        m->zero2 || !str_ok(m->dom, sizeof(m->dom)) || !str_ok(m->name, sizeof(m->name)) ||
        !str_ok(m->err, sizeof(m->err))) {
        snprintf(why, whylen,
                 "type %u: a string not NUL-terminated, a reserved field set, or flags other "
                 "than a create's",
                 m->type);
        return -1;
    }
    int rc;
    if (from_priv) {
        rc = check_notice(m, w, sizeof(w));
    } else if (m->type >= SD_PRIV_FIND && m->type <= SD_PRIV_UNPAUSE) {
        rc = check_request(m, w, sizeof(w));
    } else {
        snprintf(w, sizeof(w), "not a request type");
        rc = -1;
    }
    if (rc < 0)
        snprintf(why, whylen, "%s (type %u): %s", sd_privmsg_type_name(m->type), m->type, w);
    return rc;
}
