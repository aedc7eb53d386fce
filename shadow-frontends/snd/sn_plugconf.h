/* sn_plugconf.h - the configuration block both ALSA plugins of the sound card
 * take (pcm_understudy.c, ctl_understudy.c): where understudy-sndfront's
 * socket is, given as socket "PATH" or as card N (SNP_DEFAULT_SOCKET), and,
 * for the PCM, which PCM device of the card. A header of static functions:
 * each plugin is one shared object of its own. */
#ifndef SN_PLUGCONF_H
#define SN_PLUGCONF_H

#include "sn_proto.h"

#include <alsa/asoundlib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Fill path (the socket) and *card (0 unless given); *device gets "device"
 * where device is not NULL (a PCM), else that field is unknown. 0, or -EINVAL
 * after an SNDERR naming the field. */
static inline int sn_plugconf(snd_config_t *conf, char *path, size_t len, long *card, long *device)
{
    const char *sock = NULL;
    *card = 0;
    snd_config_iterator_t i, next;
    snd_config_for_each(i, next, conf)
    {
        snd_config_t *n = snd_config_iterator_entry(i);
        const char *id;
        if (snd_config_get_id(n, &id) < 0)
            continue;
        if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint"))
            continue;
        if (!strcmp(id, "socket")) {
            if (snd_config_get_string(n, &sock) < 0) {
                SNDERR("understudy: socket must be a string");
                return -EINVAL;
            }
        } else if (!strcmp(id, "card") || (device && !strcmp(id, "device"))) {
            long v;
            if (snd_config_get_integer(n, &v) < 0 || v < 0 || v > 65535) {
                SNDERR("understudy: %s must be a number 0..65535", id);
                return -EINVAL;
            }
            *(!strcmp(id, "card") ? card : device) = v;
        } else {
            SNDERR("understudy: unknown field %s (socket, card%s)", id, device ? ", device" : "");
            return -EINVAL;
        }
    }
    if (sock)
        snprintf(path, len, "%s", sock);
    else
        snprintf(path, len, SNP_DEFAULT_SOCKET, (unsigned)*card);
    return 0;
}

#endif
