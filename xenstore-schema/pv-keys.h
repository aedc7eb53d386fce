/* pv-keys.h - names of the standard PV protocol keys Understudy reads or
 * writes, as the public headers define them (xen/io/xenbus.h, blkif.h,
 * netif.h, sndif.h). Our own keys are in understudy-keys.h; schema.md says
 * who writes and reads each. Code refers to keys by these names only.
 *
 * FE = a frontend's device dir, BE = its backend dir. Booleans are "0"/"1";
 * numbers are unsigned decimal unless a comment says otherwise. A name ending
 * in _FMT is a printf format for keys numbered per page or per queue.
 */
#ifndef UNDERSTUDY_PV_KEYS_H
#define UNDERSTUDY_PV_KEYS_H

/* ---- xenbus: every device class (xenbus.h; written by the toolstack unless noted) ---- */
#define PVK_STATE          "state"          /* FE and BE: XenbusState, each end its own */
#define PVK_BACKEND        "backend"        /* FE: absolute path of BE */
#define PVK_BACKEND_ID     "backend-id"     /* FE: the backend's domid */
#define PVK_FRONTEND       "frontend"       /* BE: absolute path of FE */
#define PVK_FRONTEND_ID    "frontend-id"    /* BE: the frontend's domid */
#define PVK_ONLINE         "online"         /* BE: 1 while the toolstack wants it */
#define PVK_HOTPLUG_STATUS "hotplug-status" /* BE: "connected" once set up */
#define PVK_HOTPLUG_ERROR  "hotplug-error"  /* BE: why the hotplug script failed */
#define PVK_HANDLE         "handle"         /* BE (and netif FE): the device's number */
#define PVK_TYPE           "type"           /* BE: backend kind (blkif: "phy", "file") */
#define PVK_SCRIPT         "script"         /* BE: hotplug script (accepted, ignored) */
/* The store's own "error" node (xenbus_dev_error): "<errno> <message>". */
#define PVK_ERROR "error"

/* ---- the ring transport (blkif, netif and sndif spell these alike) ---- */
#define PVK_RING_REF      "ring-ref"      /* FE: grant ref of a one-page ring */
#define PVK_EVENT_CHANNEL "event-channel" /* FE: the frontend's event channel port */
#define PVK_PROTOCOL      "protocol"      /* FE: ABI of ring requests (XEN_IO_PROTO_ABI_*) */
/* Multiple queues: BE offers a maximum, FE picks a count and writes each
 * queue's transport keys under PVK_QUEUE_FMT instead of its own dir. */
#define PVK_MQ_MAX_QUEUES "multi-queue-max-queues" /* BE */
#define PVK_MQ_NUM_QUEUES "multi-queue-num-queues" /* FE */
#define PVK_QUEUE_FMT     "queue-%u"               /* FE: sub-dir of queue N */

/* ---- blkif (blkif.h) ---- */
/* Toolstack -> backend. */
#define PVK_BLK_PARAMS          "params"          /* BE: what to serve (a path) */
#define PVK_BLK_MODE            "mode"            /* BE: "r" (read-only) or "w" */
#define PVK_BLK_DEV             "dev"             /* BE: the guest's name for it ("xvda") */
#define PVK_BLK_PHYSICAL_DEVICE "physical-device" /* BE: "MAJOR:MINOR" (hex) from hotplug */
#define PVK_BLK_DISCARD_ENABLE  "discard-enable"  /* BE: toolstack allows discard (default 1) */
#define PVK_BLK_VIRTUAL_DEVICE  "virtual-device"  /* FE: the device number */
#define PVK_BLK_DEVICE_TYPE     "device-type"     /* FE: "disk" or "cdrom" */
/* BE, from the block hotplug script: the path of physical-device, and the
 * device node it set up. */
#define PVK_BLK_PHYSICAL_DEVICE_PATH "physical-device-path"
#define PVK_BLK_NODE                 "node"
/* Backend -> frontend: the disk and what the backend supports. */
#define PVK_BLK_SECTORS              "sectors"              /* size in 512-byte sectors */
#define PVK_BLK_SECTOR_SIZE          "sector-size"          /* logical sector, bytes */
#define PVK_BLK_PHYSICAL_SECTOR_SIZE "physical-sector-size" /* default sector-size */
#define PVK_BLK_INFO                 "info"                 /* VDISK_* bitmap (read-only...) */
#define PVK_BLK_FEATURE_FLUSH        "feature-flush-cache"  /* BLKIF_OP_FLUSH_DISKCACHE */
#define PVK_BLK_FEATURE_BARRIER      "feature-barrier"      /* BLKIF_OP_WRITE_BARRIER */
#define PVK_BLK_FEATURE_DISCARD      "feature-discard"      /* BLKIF_OP_DISCARD */
#define PVK_BLK_DISCARD_GRANULARITY  "discard-granularity"  /* bytes; default sector-size */
#define PVK_BLK_DISCARD_ALIGNMENT    "discard-alignment"    /* bytes; default 0 */
#define PVK_BLK_DISCARD_SECURE       "discard-secure"       /* BLKIF_DISCARD_SECURE honoured */
/* BLKIF_OP_INDIRECT: the most segments one indirect request may carry. */
#define PVK_BLK_FEATURE_MAX_INDIRECT "feature-max-indirect-segments"
/* Both ends: grants stay mapped across requests (each end writes its own). */
#define PVK_BLK_FEATURE_PERSISTENT "feature-persistent"
/* Multi-page rings: BE offers a maximum order, FE writes the order it used
 * and one ring-ref<N> per page (2^order of them). */
#define PVK_BLK_MAX_RING_PAGE_ORDER "max-ring-page-order" /* BE */
#define PVK_BLK_RING_PAGE_ORDER     "ring-page-order"     /* FE */
#define PVK_BLK_MAX_RING_PAGES      "max-ring-pages"      /* BE: the older spelling (pages) */
#define PVK_BLK_RING_REF_FMT        "ring-ref%u"          /* FE: page N's grant ref */
#define PVK_BLK_NUM_RING_PAGES      "num-ring-pages"      /* FE: the older spelling, removed */

/* ---- netif (netif.h) ---- */
/* Toolstack -> both ends. */
#define PVK_NET_MAC     "mac"     /* FE and BE: "aa:bb:cc:dd:ee:ff" */
#define PVK_NET_BRIDGE  "bridge"  /* BE: the bridge the vif joins */
#define PVK_NET_MTU     "mtu"     /* BE: the vif's MTU */
#define PVK_NET_RATE    "rate"    /* BE: "<bytes>,<usecs>" credit, as libxl writes it */
#define PVK_NET_VIFNAME "vifname" /* BE: the backend interface's name */
#define PVK_NET_IP      "ip"      /* BE: the guest's IPv4 addresses, space-separated (antispoof) */
/* Frontend -> backend: rings and event channels. */
#define PVK_NET_TX_RING_REF       "tx-ring-ref"
#define PVK_NET_RX_RING_REF       "rx-ring-ref"
#define PVK_NET_EVENT_CHANNEL_TX  "event-channel-tx"  /* split channels, instead of */
#define PVK_NET_EVENT_CHANNEL_RX  "event-channel-rx"  /* event-channel */
#define PVK_NET_REQUEST_RX_COPY   "request-rx-copy"   /* FE: rx by copy (the only mode we do) */
#define PVK_NET_FEATURE_RX_NOTIFY "feature-rx-notify" /* FE: it posts rx buffers with notify */
/* IPv4 TCP/UDP checksum offload off (1) or on (0, the default when absent). */
#define PVK_NET_FEATURE_NO_CSUM_OFFLOAD "feature-no-csum-offload"
/* FE asks for a multicast filter (BE offers feature-multicast-control). */
#define PVK_NET_REQUEST_MCAST_CONTROL "request-multicast-control"
/* Features; each end writes its own under its dir. */
#define PVK_NET_FEATURE_SG             "feature-sg"                /* packets over several slots */
#define PVK_NET_FEATURE_GSO_TCPV4      "feature-gso-tcpv4"         /* TCPv4 segmentation offload */
#define PVK_NET_FEATURE_GSO_TCPV6      "feature-gso-tcpv6"         /* TCPv6 segmentation offload */
#define PVK_NET_FEATURE_IPV6_CSUM      "feature-ipv6-csum-offload" /* IPv6 one; off when absent */
#define PVK_NET_FEATURE_RX_COPY        "feature-rx-copy"           /* BE: copies into rx buffers */
#define PVK_NET_FEATURE_RX_FLIP        "feature-rx-flip"           /* BE: page flipping (0 here) */
#define PVK_NET_FEATURE_MCAST_CONTROL  "feature-multicast-control" /* BE: filter by MAC list */
#define PVK_NET_FEATURE_DYN_MCAST_CTRL "feature-dynamic-multicast-control" /* BE: list changes */
#define PVK_NET_FEATURE_SPLIT_EVTCHN   "feature-split-event-channels"      /* BE: takes -tx/-rx */

/* ---- sndif (sndif.h; values as XENSND_FIELD_* there) ---- */
/* Both ends: the protocol versions BE speaks ("1,2"), the one FE chose. */
#define PVK_SND_VERSIONS "versions" /* BE */
#define PVK_SND_VERSION  "version"  /* FE */
/* FE (written by the toolstack): the card, under FE. */
#define PVK_SND_SHORT_NAME "short-name"
#define PVK_SND_LONG_NAME  "long-name"
/* Per PCM device FE/<dev> and stream FE/<dev>/<stream>: */
#define PVK_SND_DEVICE_NAME    "name"      /* device's name */
#define PVK_SND_TYPE           "type"      /* stream: PVK_SND_TYPE_PLAYBACK or _CAPTURE */
#define PVK_SND_UNIQUE_ID      "unique-id" /* stream: unique in the card */
#define PVK_SND_TYPE_PLAYBACK  "p"
#define PVK_SND_TYPE_CAPTURE   "c"
#define PVK_SND_CHANNELS_MIN   "channels-min" /* at card, device or stream level */
#define PVK_SND_CHANNELS_MAX   "channels-max"
#define PVK_SND_SAMPLE_RATES   "sample-rates"   /* comma-separated list, Hz */
#define PVK_SND_SAMPLE_FORMATS "sample-formats" /* comma-separated XENSND_PCM_FORMAT_*_STR */
#define PVK_SND_BUFFER_SIZE    "buffer-size"    /* bytes, the largest buffer */
/* Per stream, FE -> BE: the request ring (PVK_RING_REF, PVK_EVENT_CHANNEL)
 * and the event page the backend writes to. */
#define PVK_SND_EVT_RING_REF      "evt-ring-ref"
#define PVK_SND_EVT_EVENT_CHANNEL "evt-event-channel"

#endif
