/* usclock_conf.c - parse the clocked test PCM's configuration block. */
#define _GNU_SOURCE
#include "usclock_conf.h"

#include <stdlib.h>
#include <string.h>

static int get_string(snd_config_t *n, const char *id, char **out)
{
    const char *s;
    if (snd_config_get_string(n, &s) < 0 || s[0] == '\0') {
        SNDERR("usclock: %s must be a non-empty string", id);
        return -EINVAL;
    }
    free(*out);
    *out = strdup(s);
    return *out ? 0 : -ENOMEM;
}

int usclock_conf_parse(snd_config_t *conf, struct usclock_conf *c)
{
    snd_config_iterator_t i, next;
    int err = 0;

    memset(c, 0, sizeof(*c));
    snd_config_for_each(i, next, conf)
    {
        snd_config_t *n = snd_config_iterator_entry(i);
        const char *id, *s;
        if (snd_config_get_id(n, &id) < 0)
            continue;
        if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint"))
            continue;
        if (!strcmp(id, "file")) {
            err = get_string(n, id, &c->file);
        } else if (!strcmp(id, "capture_file")) {
            err = get_string(n, id, &c->capture_file);
        } else if (!strcmp(id, "truncate")) {
            int b = snd_config_get_bool(n);
            if (b < 0) {
                SNDERR("usclock: truncate must be a boolean (yes/no)");
                err = -EINVAL;
            } else {
                c->truncate = b;
            }
        } else if (!strcmp(id, "capture")) {
            if (snd_config_get_string(n, &s) < 0)
                s = "";
            if (!strcmp(s, "counter")) {
                c->source = USCLOCK_SRC_COUNTER;
            } else if (!strcmp(s, "clock")) {
                c->source = USCLOCK_SRC_CLOCK;
            } else if (!strcmp(s, "silence")) {
                c->source = USCLOCK_SRC_SILENCE;
            } else if (!strcmp(s, "file")) {
                c->source = USCLOCK_SRC_FILE;
            } else {
                SNDERR("usclock: capture must be counter, clock, silence or file");
                err = -EINVAL;
            }
        } else {
            SNDERR("usclock: unknown field %s (known: file, truncate, capture, capture_file)", id);
            err = -EINVAL;
        }
        if (err < 0)
            break;
    }
    if (!err && c->source == USCLOCK_SRC_FILE && !c->capture_file) {
        SNDERR("usclock: capture file needs capture_file");
        err = -EINVAL;
    }
    if (!err && c->capture_file && c->source != USCLOCK_SRC_FILE) {
        SNDERR("usclock: capture_file is only used with capture file");
        err = -EINVAL;
    }
    if (err < 0)
        usclock_conf_free(c);
    return err;
}

void usclock_conf_free(struct usclock_conf *c)
{
    if (!c)
        return;
    free(c->file);
    free(c->capture_file);
    c->file = c->capture_file = NULL;
}
