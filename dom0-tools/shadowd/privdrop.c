/* privdrop.c - the unprivileged part drops root (privdrop.h). */
#define _GNU_SOURCE
#include "privdrop.h"

#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_USER  "shadowd"
#define FALLBACK_USER "nobody"

/* The state dir and the files in it (a previous shadowd may have run as
 * root) become the user's; nothing is followed out of the dir. */
static int give_state_dir(int state_fd, uid_t uid, gid_t gid)
{
    if (fchown(state_fd, uid, gid) < 0 || fchmod(state_fd, 0700) < 0)
        return -1;
    int dfd = dup(state_fd);
    DIR *dir = dfd < 0 ? NULL : fdopendir(dfd);
    if (!dir) {
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(dir))) {
        struct stat st;
        if (fstatat(state_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            fchownat(state_fd, e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
            sd_log("state dir: chown %s: %s", e->d_name, strerror(errno));
    }
    closedir(dir);
    return 0;
}

static void drop_bounding_set(void)
{
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

static int no_new_privs(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        sd_log("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
        return -1;
    }
    return 0;
}

int sd_privdrop(const struct sd_conf *c, int state_fd)
{
    if (geteuid() != 0) {
        sd_log("started as uid %u, not root: no user to switch to (no_new_privs set)",
               (unsigned)geteuid());
        return no_new_privs();
    }
    const char *user = c->user;
    if (!user)
        user = getpwnam(DEFAULT_USER) ? DEFAULT_USER : FALLBACK_USER;
    struct passwd *pw = getpwnam(user);
    if (!pw) {
        sd_log("user %s: no such user (set `user` in %s)", user, c->path);
        return -1;
    }
    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    if (uid == 0) {
        sd_log("user %s is root: the part that serves the sockets and reads xenstore keeps "
               "root (for debugging only)",
               user);
        return no_new_privs();
    }
    if (give_state_dir(state_fd, uid, gid) < 0) {
        sd_log("giving the state dir %s to %s: %s", c->state_dir, user, strerror(errno));
        return -1;
    }
    drop_bounding_set();
    if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
        sd_log("switching to user %s (uid %u, gid %u): %s", user, (unsigned)uid, (unsigned)gid,
               strerror(errno));
        return -1;
    }
    uid_t r, e, s;
    if (setuid(0) == 0 || getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid) {
        sd_log("still able to become root after switching to %s: refusing to go on", user);
        return -1;
    }
    if (no_new_privs() < 0)
        return -1;
#if defined(__SANITIZE_ADDRESS__)
    /* The sanitizer build only: LeakSanitizer ptraces this process's own
     * threads at exit, which a process that changed its uid may not. */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
    sd_log("running as user %s (uid %u, gid %u): no capabilities, no_new_privs", user,
           (unsigned)uid, (unsigned)gid);
    return 0;
}
