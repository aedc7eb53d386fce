/* usclock_conf.h - the clocked test PCM's configuration (its asoundrc block).
 *
 *   pcm.clocked {
 *       type usclock
 *       file "/path/rec.usck"    # optional: where to record (usck.h); appended to
 *       truncate no              # optional: yes = empty the file when the PCM opens
 *       capture counter          # capture source: counter (default), clock, silence or file
 *       capture_file "/path.raw" # with capture file: raw frames in the stream's format
 *   }
 *   pcm_type.usclock { lib "/abs/path/libasound_module_pcm_usclock.so" }
 */
#ifndef SND_USCLOCK_CONF_H
#define SND_USCLOCK_CONF_H

#include <alsa/asoundlib.h>

/* counter: the frame counter from 0 at open; clock: the frame counter
 * numbered by CLOCK_MONOTONIC (frame n falls at n / rate s), so that a source
 * opened again - a restarted driver domain's - goes on where time says and a
 * capture across it shows the gap, never a repeat. */
enum usclock_source {
    USCLOCK_SRC_COUNTER,
    USCLOCK_SRC_CLOCK,
    USCLOCK_SRC_SILENCE,
    USCLOCK_SRC_FILE
};

struct usclock_conf {
    char *file; /* NULL: record nothing */
    int truncate;
    enum usclock_source source;
    char *capture_file; /* with USCLOCK_SRC_FILE */
};

/* Parses the PCM's block into *c; on a bad value reports it with SNDERR,
 * leaves *c freed and returns -EINVAL. */
int usclock_conf_parse(snd_config_t *conf, struct usclock_conf *c);
void usclock_conf_free(struct usclock_conf *c);

#endif
