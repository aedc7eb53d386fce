/* be_xenbus.c - the xenbus backend state machine.
 *
 *   start:  read frontend/frontend-id, class setup, publish, InitWait.
 *           (A bad config: "error" node and Closed; a change to a config key,
 *           or the frontend re-initialising, retries.)
 *   frontend Initialised/Connected, we InitWait: class connect -> Connected.
 *   frontend Initialising/InitWait, we connected or closed: disconnect,
 *           republish, InitWait - ready for a new connection.
 *   frontend Initialised while we are Connected: it re-initialised its
 *           rings without passing through Initialising; reconnect.
 *   frontend Closing/Closed/gone: disconnect, Closed.
 *   backend dir removed: disconnect, exit 0.
 *
 * A frontend found Connected when we start (or when the toolstack points us
 * at a new frontend dir) was connected to an earlier incarnation of this
 * backend; its rings are not ours to pick up. We reset to InitWait and take
 * its next state change as the start of a new connection.
 */
#define _GNU_SOURCE
#include "be_internal.h"

#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/io/xenbus.h>

/* Frontend domids are below DOMID_FIRST_RESERVED. */
#define BE_MAX_DOMID 0x7fefu

int be_write_state(struct be_dev *be, int state)
{
    if (be->state == state && xsu_read_state(be->xs, be->path) == state)
        return 0;
    if (xsu_write_state(be->xs, be->path, state) < 0) {
        BE_LOG(be, "writing %s/state: %s", be->path, strerror(errno));
        return -1;
    }
    BE_LOG(be, "state %s -> %s", xsu_state_name(be->state), xsu_state_name(state));
    be->state = state;
    return 0;
}

static bool be_dir_exists(struct be_dev *be)
{
    unsigned len;
    char *v = xs_read(be->xs, XBT_NULL, be->path, &len);
    if (v) {
        free(v);
        return true;
    }
    return errno != ENOENT;
}

/* Read frontend and frontend-id; (re)watch the frontend's state if the path changed. */
static int read_frontend(struct be_dev *be)
{
    uint64_t id;
    if (xsu_read_u64(be->xs, XBT_NULL, be->path, PVK_FRONTEND_ID, BE_MAX_DOMID, &id) < 0) {
        be_error(be, errno, "reading %s/frontend-id: %s", be->path, strerror(errno));
        return -1;
    }
    char *fe = xsu_read(be->xs, XBT_NULL, be->path, PVK_FRONTEND, sizeof(be->fe_path) - 1);
    if (!fe) {
        be_error(be, errno, "reading %s/frontend: %s", be->path, strerror(errno));
        return -1;
    }
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "/local/domain/%u/", (unsigned)id);
    if (strncmp(fe, prefix, strlen(prefix)) || strlen(fe) == strlen(prefix)) {
        be_error(be, EINVAL, "%s/frontend '%s' is not under %s (frontend-id %u)", be->path, fe,
                 prefix, (unsigned)id);
        free(fe);
        return -1;
    }
    if ((unsigned)id != be->fe_domid) {
        be_error(be, EINVAL, "%s/frontend-id %u does not match the backend path", be->path,
                 (unsigned)id);
        free(fe);
        return -1;
    }
    if (strcmp(fe, be->fe_path)) {
        if (be->fe_path[0])
            xs_unwatch(be->xs, be->fe_state_path, "fe");
        snprintf(be->fe_path, sizeof(be->fe_path), "%s", fe);
        snprintf(be->fe_state_path, sizeof(be->fe_state_path), "%s/" PVK_STATE, fe);
        if (!xs_watch(be->xs, be->fe_state_path, "fe")) {
            be_error(be, errno, "watching %s: %s", be->fe_state_path, strerror(errno));
            be->fe_path[0] = 0;
            free(fe);
            return -1;
        }
        be->fe_state = -1;
        be->fe_events = 0;
        be->stale = xsu_read_state(be->xs, be->fe_path) == XenbusStateConnected;
        if (be->stale)
            BE_LOG(be,
                   "frontend %s is Connected to an earlier backend; waiting for it to "
                   "reconnect",
                   be->fe_path);
    }
    free(fe);
    return 0;
}

static int publish_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    (void)xs;
    struct be_dev *be = arg;
    return be->ops->publish(be, t);
}

/* The class's features, in one transaction. A class callback that fails has
 * reported already (be_error); only the transaction's own calls are left. */
static int publish(struct be_dev *be)
{
    const char *call;
    if (xsu_txn(be->xs, publish_body, be, &call) == 0)
        return 0;
    if (call)
        be_error(be, errno, "%s %s: %s", call, be->path, strerror(errno));
    return -1;
}

static void disconnect(struct be_dev *be)
{
    if (!be->connected)
        return;
    be->ops->disconnect(be);
    be->connected = false;
    BE_LOG(be, "disconnected from %s", be->fe_path);
}

/* Remove the error node, if one may be there: one we wrote since the last
 * removal, or an earlier incarnation's (so the first call always asks). */
static void clear_error(struct be_dev *be)
{
    char p[300];
    if (!be->error_maybe || !xsu_path(p, sizeof(p), be->path, PVK_ERROR))
        return;
    if (xs_rm(be->xs, XBT_NULL, p) || errno == ENOENT)
        be->error_maybe = false;
}

static void enter_initwait(struct be_dev *be)
{
    if (be->offline || publish(be) < 0)
        return;
    clear_error(be);
    be_write_state(be, XenbusStateInitWait);
}

static void try_setup(struct be_dev *be)
{
    if (be->set_up || be->offline)
        return;
    if (read_frontend(be) < 0 || be->ops->setup(be) < 0) {
        be->ops->teardown(be);
        be_write_state(be, XenbusStateClosed);
        return;
    }
    be->set_up = true;
    enter_initwait(be);
}

static void do_connect(struct be_dev *be)
{
    be->connected = true;
    if (be->ops->connect(be) < 0) {
        disconnect(be);
        be_write_state(be, XenbusStateClosing);
        return;
    }
    clear_error(be);
    be_write_state(be, XenbusStateConnected);
}

static void frontend_changed(struct be_dev *be)
{
    if (!be->fe_path[0])
        return;
    /* As Linux's xenbus does: a state we cannot read (gone - EACCES when the
     * frontend's domain is gone too - no longer readable by us after a
     * rewiring, or malformed) is Unknown, and the frontend is gone. */
    int st = xsu_read_state(be->xs, be->fe_path);
    if (st < 0) {
        if (be->fe_state != XenbusStateUnknown)
            BE_LOG(be, "frontend %s/state unreadable (%s): frontend gone", be->fe_path,
                   strerror(errno));
        st = XenbusStateUnknown;
    }
    /* The first event is the watch's own, at registration: a frontend still
     * Connected then is the stale one. Any later event is a write by the
     * frontend: if it reads Connected again, the frontend went through
     * Initialising and reconnected faster than we read its state. */
    bool rewritten = be->stale && be->fe_events > 1;
    if (st == be->fe_state && !rewritten)
        return; /* a repeated event: nothing new */
    BE_LOG(be, "frontend state %s", xsu_state_name(st));
    int prev = be->fe_state;
    be->fe_state = st;
    if (be->stale && st == XenbusStateConnected && !rewritten)
        return;
    be->stale = false;

    switch (st) {
    case XenbusStateInitialising:
    case XenbusStateInitWait:
        /* A new connection: from any state we reached before. */
        disconnect(be);
        if (!be->set_up)
            try_setup(be);
        else if (be->state != XenbusStateInitWait)
            enter_initwait(be);
        break;
    case XenbusStateInitialised:
    case XenbusStateConnected:
        if (be->connected && st == XenbusStateInitialised && prev == XenbusStateConnected) {
            BE_LOG(be, "frontend re-initialised while connected; reconnecting");
            disconnect(be);
            enter_initwait(be);
        }
        if (be->set_up && !be->connected && be->state == XenbusStateInitWait)
            do_connect(be);
        break;
    case XenbusStateClosing:
    case XenbusStateClosed:
    case XenbusStateUnknown:
        disconnect(be);
        be_write_state(be, XenbusStateClosed);
        break;
    default: /* Reconfiguring/Reconfigured: not used by blkif or netif */
        break;
    }
}

/* The key of a path in the backend dir ("" for the dir itself), or NULL. */
static const char *dir_key(struct be_dev *be, const char *path)
{
    size_t n = strlen(be->path);
    if (strncmp(path, be->path, n))
        return NULL;
    if (!path[n])
        return "";
    return path[n] == '/' ? path + n + 1 : NULL;
}

static bool is_config_key(struct be_dev *be, const char *key)
{
    if (!strcmp(key, PVK_FRONTEND) || !strcmp(key, PVK_FRONTEND_ID))
        return true;
    for (const char *const *k = be->ops->config_keys; k && *k; k++)
        if (!strcmp(key, *k))
            return true;
    return false;
}

/* An event of the watch on the backend dir. It fires for every write in the
 * dir, ours included (state, error, each feature the class publishes): only
 * the dir's own path, online and the config keys are looked at. The dir's
 * own path is what the watch reports at its registration and when the dir,
 * or a dir above it, is removed (xenstored fires a watch with its own node
 * then); that event may follow any change, so it checks everything. */
static void backend_changed(struct be_dev *be, const char *path)
{
    const char *key = dir_key(be, path);
    if (!key)
        return;
    bool dir = !*key, online = !strcmp(key, PVK_ONLINE), config = is_config_key(be, key);
    if (!dir && !online && !config)
        return;
    /* The toolstack detaches a device with online=0 (and state Closing).
     * online is read first when it is looked at: found, it says the dir is
     * there too, and the dir is not read (absent, online defaults to 1). */
    uint64_t on = UINT64_MAX;
    int r = -1;
    if ((dir || online) && !be->offline)
        r = xsu_read_u64_default(be->xs, XBT_NULL, be->path, PVK_ONLINE, 1, UINT64_MAX, &on);
    if ((r < 0 || on == UINT64_MAX) && !be_dir_exists(be)) {
        BE_LOG(be, "backend dir %s removed; exiting", be->path);
        disconnect(be);
        be->exit_code = 0;
        be_loop_stop(be->loop);
        return;
    }
    if (r == 0 && on == 0) {
        BE_LOG(be, "toolstack set online=0: closing");
        be->offline = true;
        if (be->connected)
            be_write_state(be, XenbusStateClosing);
        else
            be_write_state(be, XenbusStateClosed);
        return;
    }
    if (!be->set_up && (dir || config))
        try_setup(be);
}

static void inject_changed(struct be_dev *be)
{
    char *v = xsu_read(be->xs, XBT_NULL, be->inject_path, NULL, 128);
    if (!v)
        return;
    struct be_fault f;
    if (be_fault_parse(v, &f) < 0) {
        BE_LOG_RL(be, "%s: malformed fault '%s'", be->inject_path, v);
        free(v);
        return;
    }
    free(v);
    if (be->inject_known && f.seq == be->inject_seq)
        return;
    be->inject_seq = f.seq;
    be->inject_known = true;
    BE_LOG(be, "injected fault %" PRIu64 ": %s %" PRIu64, f.seq, be_fault_name(f.kind), f.count);
    if (f.kind == BE_FAULT_CRASH)
        abort();
    be_fault_take(be, &f);
}

void be_xenbus_watch_event(struct be_dev *be, const char *path, const char *token)
{
    if (!strcmp(token, "be"))
        backend_changed(be, path);
    else if (!strcmp(token, "fe")) {
        be->fe_events++;
        frontend_changed(be);
    } else if (!strcmp(token, "inj"))
        inject_changed(be);
}

int be_xenbus_start(struct be_dev *be)
{
    /* A state read means the dir is there; only without one is it looked up. */
    be->state = xsu_read_state(be->xs, be->path);
    if (be->state < 0 && !be_dir_exists(be)) {
        BE_LOG(be, "backend dir %s does not exist", be->path);
        return -1;
    }
    be->error_maybe = true;
    if (be->state > XenbusStateInitialising)
        BE_LOG(be, "backend dir holds state %s of an earlier backend; resetting",
               xsu_state_name(be->state));
    be->fe_state = -1;

    /* A fault requested before we started is not for us: only new seqs count. */
    snprintf(be->inject_path, sizeof(be->inject_path), "/local/domain/%u/%s", be->self,
             USK_DRV_INJECT);
    char *v = xsu_read(be->xs, XBT_NULL, be->inject_path, NULL, 128);
    struct be_fault f;
    if (v && be_fault_parse(v, &f) == 0) {
        be->inject_seq = f.seq;
        be->inject_known = true;
    }
    free(v);

    if (!xs_watch(be->xs, be->inject_path, "inj")) {
        BE_LOG(be, "watching %s: %s", be->inject_path, strerror(errno));
        return -1;
    }
    /* The backend dir is watched once setup and publication are done, so
     * that their writes (a dozen keys and the state) fire no event. The
     * watch's first event, at registration, looks at everything again
     * (backend_changed): a removal, online=0 or a config key written in
     * between is not missed, and a setup that failed is retried once. */
    try_setup(be);
    if (!xs_watch(be->xs, be->path, "be")) {
        BE_LOG(be, "watching %s: %s", be->path, strerror(errno));
        return -1;
    }
    return 0;
}

void be_xenbus_shutdown(struct be_dev *be)
{
    disconnect(be);
    if (be_dir_exists(be))
        be_write_state(be, XenbusStateClosed);
}
