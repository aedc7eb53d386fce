/* xl_config - shadowd's reading of an operator's xl domain config for the
 * libxl driver (dom0-tools/shadowd/xlcfg.c: sd_xlcfg_load over libxlutil's
 * parser, every understood key checked, anything else refused), with no
 * libxl context (as shadowd -n). Input: the domain's name as shadowd.conf
 * calls it (a line), then the file's contents. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "xlcfg.h"

#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("drv.cfg", 0);
        FZ_CHECK(fd >= 0);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
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
    libxl_domain_config cfg;
    if (sd_xlcfg_load(NULL, path, name, err, &cfg) == 0)
        libxl_domain_config_dispose(&cfg);
    fclose(err);
    return 0;
}
