/* xs_store - the frontends' readers of what a backend (and the toolstack)
 * publish in xenstore, over fuzz/fake_xs.c holding the input's keys:
 *   the core (shadow-frontends/core/sf_xenbus.c): sfx_read_backend (backend,
 *     backend-id), sfx_read_generation, sfx_backend_state;
 *   the disk (blk/blk_xenbus.c): blk_read_transport (max-ring-page-order,
 *     max-ring-pages, multi-queue-max-queues), blk_read_device (sectors,
 *     sector-size, info, feature keys, discard geometry);
 *   the NIC (net/nf_xenbus.c): nf_read_features, nf_read_fe_mac;
 *   the sound card: sn_backend_offers (snd/sn_xenbus.c: versions) and
 *     sndc_read (common/snd_card.c: the card's tree of PCMs and streams with
 *     their rates, formats, channels, buffer sizes and unique ids; sndback
 *     reads the same tree).
 * Input: "key=value" lines; relative keys are under the backend dir
 * /local/domain/2/backend/x/1/0, absolute ones anywhere (the frontend dir is
 * /local/domain/1/device/x/0). */
#define _GNU_SOURCE
#include "blk_xenbus.h"
#include "fake_xs.h"
#include "fuzz.h"
#include "nf_xenbus.h"
#include "sf_xenbus.h"
#include "snd_card.h"
#include "sn_xenbus.h"

#define FE "/local/domain/1/device/x/0"
#define BE "/local/domain/2/backend/x/1/0"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fxs_reset();
    fxs_load(BE, (const char *)data, size);
    struct sfx x;
    memset(&x, 0, sizeof(x));
    x.xs = fxs_handle();
    snprintf(x.fe, sizeof(x.fe), FE);
    if (sfx_read_backend(&x) < 0) {
        snprintf(x.be, sizeof(x.be), BE);
        x.be_id = 2;
    }
    FZ_CHECK(x.be[0] == '/');
    uint64_t gen;
    (void)sfx_read_generation(&x, &gen);
    int st = sfx_backend_state(&x);
    FZ_CHECK(st >= -1 && st <= 7);

    const char *why = "";
    struct blk_features bf;
    memset(&bf, 0, sizeof(bf));
    if (blk_read_transport(&x, &bf, &why) == 0)
        FZ_CHECK(bf.max_ring_order <= 31);
    if (blk_read_device(&x, &bf, &why) == 0)
        FZ_CHECK(bf.sectors && bf.sector_size >= 512 && !(bf.sector_size & (bf.sector_size - 1)));

    struct nf_features nf;
    memset(&nf, 0, sizeof(nf));
    (void)nf_read_features(&x, &nf, &why);
    uint8_t mac[6];
    (void)nf_read_fe_mac(&x, mac);

    char seen[64];
    (void)sn_backend_offers(&x, 2, seen, sizeof(seen));
    static struct sndc_card card;
    char msg[256];
    if (sndc_read(x.xs, x.fe, &card, msg, sizeof(msg)) == 0) {
        FZ_CHECK(card.nr_streams <= SNDC_MAX_STREAMS && card.nr_pcms <= SNDC_MAX_PCMS);
        for (unsigned i = 0; i < card.nr_streams; i++) {
            const struct sndc_params *p = &card.st[i].p;
            FZ_CHECK(p->nr_rates >= 1 && p->nr_rates <= SNDC_MAX_RATES);
            FZ_CHECK(p->ch_min >= 1 && p->ch_min <= p->ch_max && p->ch_max <= SNDC_MAX_CHANNELS);
            FZ_CHECK(p->formats && p->buffer_size && p->buffer_size <= SNDC_MAX_BUFFER);
        }
    }
    fxs_reset();
    return 0;
}
