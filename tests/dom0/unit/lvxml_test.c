/* lvxml_test - the libvirt driver's reading of the operator's domain XML:
 * the check of shadowd -n (FILE:LINE messages), and the definition renamed
 * for the standby, without its <uuid>. */
#define _GNU_SOURCE
#include "check.h"
#include "lvxml.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/dom0-lvxml-test.XXXXXX";

static void put(const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* shadowd -n's check of the current file for name; its messages in errs. */
static int check(const char *name, char *errs, size_t len)
{
    memset(errs, 0, len);
    FILE *e = fmemopen(errs, len, "w");
    int rc = sd_lvxml_check(path, name, e);
    fclose(e);
    return rc;
}

int main(void)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    char errs[1024], want[256], err[256];
    const char *good = "<domain type='xen'>\n  <name>drv</name>\n"
                       "  <uuid>0b6c3e5a-2f41-4d8e-9a57-3c1d2e4f5a61</uuid>\n"
                       "  <memory unit='MiB'>256</memory>\n</domain>\n";
    put(good);
    CHECK(check("drv", errs, sizeof(errs)) == 0 && !errs[0]);
    CHECK(check("other", errs, sizeof(errs)) < 0);
    snprintf(want, sizeof(want), "%s:2: <name>drv</name>, but shadowd's config calls", path);
    CHECK(strstr(errs, want) != NULL);

    /* As itself: unchanged, uuid kept. */
    char *x = sd_lvxml_load(path, "drv", err, sizeof(err));
    CHECK(x && strstr(x, "<name>drv</name>") && strstr(x, "<uuid>"));
    free(x);
    /* As the standby: renamed, no uuid, the rest kept. */
    x = sd_lvxml_load(path, "drv.2", err, sizeof(err));
    CHECK(x && strstr(x, "<name>drv.2</name>") && !strstr(x, "<uuid>") &&
          strstr(x, "<memory unit=\"MiB\">256</memory>"));
    free(x);

    /* Mistakes. */
    put("<domain type='xen'>\n  <name>drv</name>\n  <memory>\n</domain>\n");
    CHECK(check("drv", errs, sizeof(errs)) < 0 && strstr(errs, "not well-formed XML"));
    put("<domain>\n  <name>drv</name>\n</domain>\n");
    CHECK(check("drv", errs, sizeof(errs)) < 0 && strstr(errs, ":1: <domain> has no type="));
    put("<vm type='xen'><name>drv</name></vm>\n");
    CHECK(check("drv", errs, sizeof(errs)) < 0 && strstr(errs, "the root element is <vm>"));
    put("<domain type='xen'>\n</domain>\n");
    CHECK(check("drv", errs, sizeof(errs)) < 0 && strstr(errs, "has no <name>"));
    x = sd_lvxml_load(path, "drv", err, sizeof(err));
    CHECK(!x && strstr(err, "has no <name>"));
    /* An external entity is not fetched (no network, no file). */
    put("<!DOCTYPE d [<!ENTITY e SYSTEM \"/etc/passwd\">]>\n"
        "<domain type='xen'><name>drv</name><description>&e;</description></domain>\n");
    x = sd_lvxml_load(path, "drv.2", err, sizeof(err));
    CHECK(!x || !strstr(x, "root:"));
    free(x);
    unlink(path);
    x = sd_lvxml_load(path, "drv", err, sizeof(err));
    CHECK(!x && strstr(err, "No such file"));
    if (check_failures)
        fprintf(stderr, "last messages:\n%s%s\n", errs, err);
    return check_status();
}
