/* test-common-pv-keys.c - T0 test of xenstore-schema/pv-keys.h: the key
 * names that the public headers define as macros (sndif.h) are spelled as
 * there, and the formatted names expand as the protocols number them. */
#define _GNU_SOURCE
#include "xen_barriers.h"

#include "check.h"
#include "pv-keys.h"

#include <string.h>
#include <xen/io/sndif.h>

#define SAME(a, b) CHECK(strcmp((a), (b)) == 0)

int main(void)
{
    SAME(PVK_SND_VERSIONS, XENSND_FIELD_BE_VERSIONS);
    SAME(PVK_SND_VERSION, XENSND_FIELD_FE_VERSION);
    SAME(PVK_SND_SHORT_NAME, XENSND_FIELD_VCARD_SHORT_NAME);
    SAME(PVK_SND_LONG_NAME, XENSND_FIELD_VCARD_LONG_NAME);
    SAME(PVK_RING_REF, XENSND_FIELD_RING_REF);
    SAME(PVK_EVENT_CHANNEL, XENSND_FIELD_EVT_CHNL);
    SAME(PVK_SND_EVT_RING_REF, XENSND_FIELD_EVT_RING_REF);
    SAME(PVK_SND_EVT_EVENT_CHANNEL, XENSND_FIELD_EVT_EVT_CHNL);
    SAME(PVK_SND_DEVICE_NAME, XENSND_FIELD_DEVICE_NAME);
    SAME(PVK_SND_TYPE, XENSND_FIELD_TYPE);
    SAME(PVK_SND_UNIQUE_ID, XENSND_FIELD_STREAM_UNIQUE_ID);
    SAME(PVK_SND_CHANNELS_MIN, XENSND_FIELD_CHANNELS_MIN);
    SAME(PVK_SND_CHANNELS_MAX, XENSND_FIELD_CHANNELS_MAX);
    SAME(PVK_SND_SAMPLE_RATES, XENSND_FIELD_SAMPLE_RATES);
    SAME(PVK_SND_SAMPLE_FORMATS, XENSND_FIELD_SAMPLE_FORMATS);
    SAME(PVK_SND_BUFFER_SIZE, XENSND_FIELD_BUFFER_SIZE);
    SAME(PVK_SND_TYPE_PLAYBACK, XENSND_STREAM_TYPE_PLAYBACK);
    SAME(PVK_SND_TYPE_CAPTURE, XENSND_STREAM_TYPE_CAPTURE);

    char k[32];
    snprintf(k, sizeof(k), PVK_BLK_RING_REF_FMT, 3u);
    SAME(k, "ring-ref3");
    snprintf(k, sizeof(k), PVK_QUEUE_FMT, 0u);
    SAME(k, "queue-0");
    /* A few the blkif/netif headers define only in prose. */
    SAME(PVK_BLK_MAX_RING_PAGE_ORDER, "max-ring-page-order");
    SAME(PVK_NET_EVENT_CHANNEL_TX, "event-channel-tx");
    SAME(PVK_NET_FEATURE_IPV6_CSUM, "feature-ipv6-csum-offload");
    return check_done("test-common-pv-keys");
}
