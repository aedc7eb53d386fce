/* shadowd_conf - shadowd's configuration file parser
 * (dom0-tools/shadowd/conf.c: sd_conf_load, then sd_conf_dump of what it
 * understood), with the input as the file's contents. */
#define _GNU_SOURCE
#include "conf.h"
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("shadowd.conf", 0);
        FZ_CHECK(fd >= 0);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    FZ_CHECK(ftruncate(fd, 0) == 0);
    FZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
    FILE *err = fopen("/dev/null", "w");
    struct sd_conf *c = sd_conf_load(path, err);
    if (c) {
        for (unsigned i = 0; i < c->ndoms; i++) {
            FZ_CHECK(sd_conf_domain(c, c->doms[i].name) != NULL);
            (void)sd_driver_name(c->doms[i].driver);
        }
        sd_conf_dump(c, err);
        sd_conf_free(c);
    }
    fclose(err);
    return 0;
}
