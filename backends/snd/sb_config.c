/* sb_config.c - the card as the toolstack describes it in the frontend's
 * dir, read by common/snd_card.c (levels, inheritance, every value checked
 * as peer input); what is sndback's own is the PCM a stream plays to.
 */
#define _GNU_SOURCE
#include "sb.h"

#include "pv-keys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* "alsa:<pcm>" names the stream's PCM; "#<tag>" after it keeps two streams
 * on one PCM (its playback and capture) unique. */
static int pcm_of(struct sb_stream *s)
{
    if (strncmp(s->unique_id, "alsa:", 5))
        return 0;
    snprintf(s->pcm_name, sizeof(s->pcm_name), "%s", s->unique_id + 5);
    s->pcm_name[strcspn(s->pcm_name, "#")] = 0;
    if (!s->pcm_name[0]) {
        be_error(s->d->be, EINVAL, "%s/%s '%s': alsa: without a PCM name", s->dir,
                 PVK_SND_UNIQUE_ID, s->unique_id);
        return -1;
    }
    return 0;
}

int sb_config_read(struct sb_dev *d)
{
    struct sndc_card *card = calloc(1, sizeof(*card));
    char msg[512];
    d->nr_streams = 0;
    if (!card) {
        be_error(d->be, ENOMEM, "out of memory for the card");
        return -1;
    }
    int rc = sndc_read(be_xs(d->be), be_fe_path(d->be), card, msg, sizeof(msg));
    if (rc < 0)
        be_error(d->be, errno, "%s", msg);
    snprintf(d->short_name, sizeof(d->short_name), "%s", card->short_name);
    snprintf(d->long_name, sizeof(d->long_name), "%s", card->long_name);
    for (unsigned i = 0; rc == 0 && i < card->nr_streams; i++) {
        const struct sndc_stream *c = &card->st[i];
        struct sb_stream *s = &d->st[i];
        memset(s, 0, sizeof(*s));
        s->d = d;
        s->pcm_idx = c->pcm_idx;
        s->idx = c->idx;
        s->pcm.epfd = -1;
        s->capture = c->capture;
        s->p = c->p;
        snprintf(s->dir, sizeof(s->dir), "%s", c->dir);
        snprintf(s->unique_id, sizeof(s->unique_id), "%s", c->unique_id);
        rc = pcm_of(s);
        d->nr_streams = i + 1;
    }
    free(card);
    return rc;
}
