/* privcheck_test - shadowd-priv's rules (privcheck.c): which names, creates
 * and domains a request may touch; and the shape of what shadowd accepts
 * from shadowd-priv (privmsg.c, the direction privpoke does not send). */
#define _GNU_SOURCE
#include "check.h"
#include "conf.h"
#include "privcheck.h"
#include "privmsg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/dom0-privcheck-test.XXXXXX";

static struct sd_domstat stat_of(enum sd_run run, const char *name)
{
    struct sd_domstat st;
    memset(&st, 0, sizeof(st));
    st.run = run;
    st.reason = -1;
    snprintf(st.name, sizeof(st.name), "%s", name);
    return st;
}

static void names(const struct sd_conf *c)
{
    char why[256];
    CHECK(sd_privchk_name(c, SD_DRIVER_XENSIM, "blk", why, sizeof(why)) == &c->doms[0]);
    CHECK(sd_privchk_name(c, SD_DRIVER_XENSIM, "blk.2", why, sizeof(why)) == &c->doms[0]);
    CHECK(!sd_privchk_name(c, SD_DRIVER_XENSIM, "blk.3", why, sizeof(why)));
    CHECK(!sd_privchk_name(c, SD_DRIVER_XENSIM, "bl", why, sizeof(why)));
    CHECK(!sd_privchk_name(c, SD_DRIVER_XENSIM, "blkx", why, sizeof(why)));
    CHECK(!sd_privchk_name(c, SD_DRIVER_XENSIM, "net", why, sizeof(why))); /* libvirt's */
    CHECK(strstr(why, "'net' is not a xensim domain") != NULL);
    CHECK(sd_privchk_name(c, SD_DRIVER_LIBVIRT, "net.2", why, sizeof(why)) == &c->doms[1]);
    CHECK(sd_privchk_create(c, SD_DRIVER_XENSIM, "blk", "blk.2", why, sizeof(why)) == &c->doms[0]);
    CHECK(!sd_privchk_create(c, SD_DRIVER_XENSIM, "blk", "net", why, sizeof(why)));
    CHECK(!sd_privchk_create(c, SD_DRIVER_LIBVIRT, "blk", "blk", why, sizeof(why)));
    CHECK(!sd_privchk_create(c, SD_DRIVER_XENSIM, "guest", "guest", why, sizeof(why)));
}

static void ownership(const struct sd_conf *c)
{
    char why[256];
    struct sd_privown o;
    memset(&o, 0, sizeof(o));
    struct sd_domstat ours = stat_of(SD_RUN_RUNNING, "blk.2"),
                      guest = stat_of(SD_RUN_RUNNING, "guest"),
                      nameless = stat_of(SD_RUN_SHUTDOWN, ""),
                      nameless_running = stat_of(SD_RUN_RUNNING, ""),
                      gone = stat_of(SD_RUN_GONE, "");
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_XENSIM, 5, &ours, false, why, sizeof(why)) == 0);
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_XENSIM, 6, &guest, true, why, sizeof(why)) < 0);
    CHECK(strstr(why, "domain 6 ('guest') is not one of the xensim domains") != NULL);
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_XENSIM, 6, &guest, false, why, sizeof(why)) < 0);
    /* The same name through the other driver is not ours. */
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_LIBVIRT, 5, &ours, true, why, sizeof(why)) < 0);
    /* Gone: a destroy has nothing to do (allowed), a pause or crash is refused. */
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_XENSIM, 7, &gone, true, why, sizeof(why)) == 0);
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_XENSIM, 7, &gone, false, why, sizeof(why)) < 0);
    /* No name (a stopped libvirt domain, a dying one): destroy only, and
     * only once it is stopped; anything if shadowd-priv found or created it. */
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_LIBVIRT, 8, &nameless, true, why, sizeof(why)) == 0);
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_LIBVIRT, 8, &nameless, false, why, sizeof(why)) < 0);
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_LIBVIRT, 8, &nameless_running, true, why, sizeof(why)) <
          0);
    sd_privown_add(&o, SD_DRIVER_LIBVIRT, 8);
    CHECK(sd_privchk_owned(c, &o, SD_DRIVER_LIBVIRT, 8, &nameless_running, false, why,
                           sizeof(why)) == 0);
    CHECK(!sd_privown_has(&o, SD_DRIVER_XENSIM, 8));
    sd_privown_del(&o, SD_DRIVER_LIBVIRT, 8);
    CHECK(!sd_privown_has(&o, SD_DRIVER_LIBVIRT, 8));
    /* Bounded: the oldest go first. */
    for (unsigned i = 1; i <= SD_PRIVOWN_MAX + 1; i++)
        sd_privown_add(&o, SD_DRIVER_XENSIM, 100 + i);
    CHECK(!sd_privown_has(&o, SD_DRIVER_XENSIM, 101));
    CHECK(sd_privown_has(&o, SD_DRIVER_XENSIM, 100 + SD_PRIVOWN_MAX + 1));
}

static struct sd_privmsg notice(uint32_t type)
{
    struct sd_privmsg m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    return m;
}

static void from_priv(void)
{
    char why[256];
    struct sd_privmsg m = notice(SD_PRIV_REPLY);
    m.rc = 1;
    m.domid = 3;
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) == 0);
    CHECK(sd_privmsg_check(&m, sizeof(m) - 1, true, why, sizeof(why)) < 0);
    m.rc = 2;
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    m = notice(SD_PRIV_REPLY);
    m.st.run = SD_RUN_GONE + 1;
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    m = notice(SD_PRIV_REPLY);
    memset(m.st.name, 'x', sizeof(m.st.name));
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    m = notice(SD_PRIV_DONE);
    m.op = SD_OP_CREATE;
    m.domid = 4;
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) == 0);
    m.domid = 0; /* created, with no domid */
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    m.op = 7;
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    m = notice(SD_PRIV_CHANGED);
    m.kind = SD_DRIVER_XENSIM;
    m.domid = SD_PRIV_DOMMAX + 1;
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    m = notice(SD_PRIV_FIND); /* a request is not something shadowd-priv sends */
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    m = notice(SD_PRIV_HELLO);
    snprintf(m.name, sizeof(m.name), "x");
    CHECK(sd_privmsg_check(&m, sizeof(m), true, why, sizeof(why)) < 0);
    CHECK(!strcmp(sd_privmsg_type_name(SD_PRIV_DESTROY), "destroy"));
    CHECK(!strcmp(sd_privmsg_type_name(SD_PRIV_SETTLE), "settle"));
    CHECK(!strcmp(sd_privmsg_type_name(SD_PRIV_UNPAUSE), "unpause"));
    CHECK(!strcmp(sd_privmsg_type_name(0), "?"));
}

int main(void)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    FILE *f = fdopen(fd, "w");
    fputs("domain blk {\n driver xensim\n command /bin/true\n}\n"
          "domain net {\n driver libvirt\n libvirt-xml /x.xml\n}\n",
          f);
    fclose(f);
    struct sd_conf *c = sd_conf_load(path, stderr);
    unlink(path);
    CHECK(c && c->ndoms == 2);
    if (!c)
        return check_status();
    names(c);
    ownership(c);
    from_priv();
    sd_conf_free(c);
    return check_status();
}
