/* conf_test - shadowd's config parser: values, top-level defaults, quoting,
 * and one "FILE:LINE: message" per mistake. */
#define _GNU_SOURCE
#include "check.h"
#include "conf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/dom0-conf-test.XXXXXX";

static struct sd_conf *load(const char *text, char *errs, size_t len)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    FILE *e = fmemopen(errs, len, "w");
    struct sd_conf *c = sd_conf_load(path, e);
    fclose(e);
    return c;
}

static unsigned count_lines(const char *s)
{
    unsigned n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

int main(void)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    char errs[4096] = "";
    struct sd_conf *c = load("state-dir /s\nrun-dir \"/r un\"\nheartbeat-timeout 2s\n"
                             "report-budget 7\nignore-backend-key tbe-* pong\n"
                             "domain a {\n driver xensim\n command /bin/sleep \"1 0\" x\\y\n"
                             " env A=1\n env B=2\n restart-budget 0\n}\n"
                             "domain b {\n driver libxl\n xl-config /etc/xen/b.cfg\n"
                             " heartbeat-timeout off # no agent\n}\n",
                             errs, sizeof(errs));
    CHECK(c != NULL);
    if (!c) {
        fprintf(stderr, "%s", errs);
        return 1;
    }
    CHECK(!strcmp(c->state_dir, "/s") && !strcmp(c->run_dir, "/r un"));
    CHECK(c->report_budget == 7 && c->nignore == 2 && !strcmp(c->ignore_keys[1], "pong"));
    CHECK(c->ndoms == 2);
    const struct sd_domconf *a = sd_conf_domain(c, "a"), *b = sd_conf_domain(c, "b");
    CHECK(a && b && !sd_conf_domain(c, "z"));
    if (a && b) {
        CHECK(a->driver == SD_DRIVER_XENSIM && a->argc == 3);
        CHECK(!strcmp(a->argv[1], "1 0") && !strcmp(a->argv[2], "x\\y") && !a->argv[3]);
        CHECK(a->envc == 2 && !strcmp(a->env[1], "B=2"));
        CHECK(a->heartbeat_timeout_ms == 2000); /* the top-level default */
        CHECK(a->restart_budget == 0);
        CHECK(a->restart_window_ms == 600000 && a->max_devices == 256); /* built-in */
        CHECK(b->driver == SD_DRIVER_LIBXL && !strcmp(b->xl_config, "/etc/xen/b.cfg"));
        CHECK(b->heartbeat_timeout_ms == 0);
        CHECK(b->line == 13);
    }
    sd_conf_free(c);

    /* libvirt, and standby as a top-level default with a per-domain override. */
    c = load("libvirt-uri test:///default\nstandby on\n"
             "domain v {\n driver libvirt\n libvirt-xml /etc/understudy/v.xml\n}\n"
             "domain w {\n driver xensim\n command /bin/true\n standby off\n}\n",
             errs, sizeof(errs));
    CHECK(c != NULL);
    if (c) {
        const struct sd_domconf *v = sd_conf_domain(c, "v"), *w = sd_conf_domain(c, "w");
        CHECK(!strcmp(c->libvirt_uri, "test:///default"));
        CHECK(v && v->driver == SD_DRIVER_LIBVIRT &&
              !strcmp(v->libvirt_xml, "/etc/understudy/v.xml"));
        CHECK(v && v->standby && w && !w->standby);
        sd_conf_free(c);
    } else {
        fprintf(stderr, "%s", errs);
    }

    /* Mistakes: each on its own line, all of them. */
    memset(errs, 0, sizeof(errs));
    c = load("frob 1\nstate-dir rel\ndomain a {\n driver xensim\n command /bin/true\n"
             " boot-timeout 0s\n max-devices 0\n}\ndomain a {\n}\n",
             errs, sizeof(errs));
    CHECK(c == NULL);
    CHECK(count_lines(errs) == 5);
    char want[256];
    snprintf(want, sizeof(want), "%s:1: unknown option 'frob'", path);
    CHECK(strstr(errs, want) != NULL);
    snprintf(want, sizeof(want), "%s:6: 'boot-timeout' must be more than 0", path);
    CHECK(strstr(errs, want) != NULL);
    snprintf(want, sizeof(want), "%s:7: 'max-devices': '0' is not a whole number", path);
    CHECK(strstr(errs, want) != NULL);
    snprintf(want, sizeof(want), "%s:9: domain 'a' declared twice", path);
    CHECK(strstr(errs, want) != NULL);
    if (check_failures)
        fprintf(stderr, "errors were:\n%s", errs);
    sd_conf_free(NULL);
    unlink(path);
    return check_status();
}
