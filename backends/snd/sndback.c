/* sndback - Understudy's userspace sndif backend: one process per virtual
 * sound card, in a driver domain.
 *
 *   sndback --backend /local/domain/<self>/backend/vsnd/<fe-domid>/<devid> [--pcm NAME]
 *
 * A stream whose unique-id is "alsa:<pcm>" or "alsa:<pcm>#<tag>" plays to
 * (captures from) that ALSA PCM; any other stream uses --pcm NAME (default
 * "default"). The
 * xenbus state machine, rings and event loop are the backend core's
 * (backends/core); this file is the class's ops table. Design:
 * backends/README.md.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sb_setup(struct be_dev *be)
{
    struct sb_dev *d = be_priv(be);
    d->be = be;
    if (sb_config_read(d) < 0)
        return -1;
    BE_LOG(be, "card '%s': %u stream%s, default PCM %s", d->short_name, d->nr_streams,
           d->nr_streams == 1 ? "" : "s", d->default_pcm ? d->default_pcm : "default");
    return 0;
}

static void sb_teardown(struct be_dev *be)
{
    struct sb_dev *d = be_priv(be);
    for (unsigned i = 0; i < d->nr_streams; i++)
        sb_close(&d->st[i]);
    d->nr_streams = 0;
}

/* The card is described in the frontend's dir; the backend dir holds none of it. */
static const char *const sb_config_keys[] = {NULL};

static const struct be_class_ops sb_ops = {
    .size = sizeof(struct be_class_ops),
    .prog = "sndback",
    .type = XENSND_DRIVER_NAME,
    .config_keys = sb_config_keys,
    .setup = sb_setup,
    .publish = sb_publish,
    .connect = sb_connect,
    .disconnect = sb_disconnect,
    .teardown = sb_teardown,
    .corrupt = sb_corrupt,
};

int main(int argc, char **argv)
{
    static struct sb_dev dev;
    /* --pcm is ours; the core parses the rest. */
    char **args = calloc((size_t)argc + 1, sizeof(*args));
    if (!args) {
        fprintf(stderr, "sndback: out of memory\n");
        return 1;
    }
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--pcm") && i + 1 < argc)
            dev.default_pcm = argv[++i];
        else if (!strncmp(argv[i], "--pcm=", 6))
            dev.default_pcm = argv[i] + 6;
        else
            args[n++] = argv[i];
    }
    if (dev.default_pcm && !*dev.default_pcm) {
        fprintf(stderr, "sndback: --pcm: empty name\n");
        free(args);
        return 2;
    }
    int rc = be_main(&sb_ops, &dev, n, args);
    free(args);
    return rc;
}
