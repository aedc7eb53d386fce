/* libvirt_xml - shadowd's reading of an operator's libvirt domain definition
 * for the libvirt driver (dom0-tools/shadowd/lvxml.c over libxml2):
 * sd_lvxml_check as shadowd -n runs it, then sd_lvxml_load renaming it for a
 * standby. Input: the domain's name as shadowd.conf calls it (a line), then
 * the file's contents. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "lvxml.h"

#include <libxml/parser.h>
#include <sys/mman.h>
#include <unistd.h>

static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("drv.xml", 0);
        FZ_CHECK(fd >= 0);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        xmlSetGenericErrorFunc(NULL, quiet);
    }
    const uint8_t *nl = memchr(data, '\n', size);
    size_t nlen = nl ? (size_t)(nl - data) : 0;
    char name[64];
    snprintf(name, sizeof(name), "%.*s", (int)(nlen < 63 ? nlen : 63), (const char *)data);
    if (nl) {
        data += nlen + 1;
        size -= nlen + 1;
    }
    FZ_CHECK(ftruncate(fd, 0) == 0);
    FZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
    FILE *err = fopen("/dev/null", "w");
    if (sd_lvxml_check(path, name, err) == 0) {
        char msg[256];
        char *x = sd_lvxml_load(path, "drv-standby", msg, sizeof(msg));
        free(x);
        x = sd_lvxml_load(path, name, msg, sizeof(msg));
        free(x);
    }
    fclose(err);
    return 0;
}
