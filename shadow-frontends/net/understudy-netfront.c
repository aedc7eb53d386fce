/* understudy-netfront - the shadow netif frontend daemon: a TAP interface
 * in the guest, connected to whatever netif backend the toolstack wires the
 * frontend dir to, surviving the backend's death (see README.md). */
#define _GNU_SOURCE
#include "cmdline.h"
#include "nf_dev.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: understudy-netfront --device DIR [--ifname NAME] [--deadline-ms MS]\n"
            "                           [--probe-ms MS] [--max-held N] [--poll-ms MS]\n"
            "                           [--offloads on|off] [--queues N] [--shadow on|off] [-v]\n"
            "  --device DIR     the frontend dir, e.g. device/vif/0 (relative to the domain)\n"
            "  --ifname NAME    the TAP interface to create (default eth0)\n"
            "  --deadline-ms MS a tx request unanswered this long means a hung backend "
            "(default 2000)\n"
            "  --probe-ms MS    after MS with no tx request outstanding, send a liveness probe\n"
            "                   (a no-op multicast list request under the same deadline), so\n"
            "                   that a hang is seen while the guest only receives; needs the\n"
            "                   backend's multicast control; 0: never (default: half the\n"
            "                   deadline)\n"
            "  --max-held N     frames held while there is no backend (default 256)\n"
            "  --poll-ms MS     how often the interface configuration is read (default 200)\n"
            "  --offloads on|off checksum and TCP segmentation offloads, both ways, where the\n"
            "                   backend has them (default on)\n"
            "  --queues N       queues (rings) to use, 1..2, as the backend allows (default 1)\n"
            "  --shadow on|off  off: a plain netfront, for measuring what the shadow costs\n"
            "                   (default on). Off: no receive filter (every frame the\n"
            "                   backend passes goes to the TAP), unanswered tx is not\n"
            "                   tracked or replayed, tx while there is no backend is\n"
            "                   dropped (not held), and a new backend is not given the\n"
            "                   multicast list (only changes made while it is connected).\n"
            "                   Detection and reconnection still run.\n"
            "  -v               log configuration changes\n");
}

int main(int argc, char **argv)
{
    unsigned probe_ms = UINT_MAX; /* default: half the deadline, known after parsing */
    struct nf_config cfg = {.ifname = "eth0",
                            .deadline_ms = 2000,
                            .max_held = 256,
                            .poll_ms = 200,
                            .offloads = true,
                            .queues = 1,
                            .shadow = true};
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'},
                                         {"ifname", required_argument, NULL, 'i'},
                                         {"deadline-ms", required_argument, NULL, 't'},
                                         {"probe-ms", required_argument, NULL, 'P'},
                                         {"max-held", required_argument, NULL, 'm'},
                                         {"poll-ms", required_argument, NULL, 'p'},
                                         {"offloads", required_argument, NULL, 'o'},
                                         {"queues", required_argument, NULL, 'q'},
                                         {"shadow", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
        switch (o) {
        case 'd':
            cfg.device = optarg;
            break;
        case 'i':
            cfg.ifname = optarg;
            break;
        case 't':
            if (cmdline_uint(optarg, 10, 3600000, &cfg.deadline_ms) < 0) {
                fprintf(stderr, "understudy-netfront: --deadline-ms '%s': want 10..3600000\n",
                        optarg);
                return 2;
            }
            break;
        case 'P':
            if (cmdline_uint(optarg, 0, 3600000, &probe_ms) < 0 || (probe_ms && probe_ms < 10)) {
                fprintf(stderr, "understudy-netfront: --probe-ms '%s': want 0 or 10..3600000\n",
                        optarg);
                return 2;
            }
            break;
        case 'm':
            if (cmdline_uint(optarg, 1, 65536, &cfg.max_held) < 0) {
                fprintf(stderr, "understudy-netfront: --max-held '%s': want 1..65536\n", optarg);
                return 2;
            }
            break;
        case 'p':
            if (cmdline_uint(optarg, 10, 60000, &cfg.poll_ms) < 0) {
                fprintf(stderr, "understudy-netfront: --poll-ms '%s': want 10..60000\n", optarg);
                return 2;
            }
            break;
        case 'o':
            if (cmdline_onoff("understudy-netfront", "--offloads", optarg, &cfg.offloads) < 0)
                return 2;
            break;
        case 'q':
            if (cmdline_uint(optarg, 1, NF_MAX_QUEUES, &cfg.queues) < 0) {
                fprintf(stderr, "understudy-netfront: --queues '%s': want 1..%u\n", optarg,
                        NF_MAX_QUEUES);
                return 2;
            }
            break;
        case 's':
            if (cmdline_onoff("understudy-netfront", "--shadow", optarg, &cfg.shadow) < 0)
                return 2;
            break;
        case 'v':
            cfg.verbose = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!cfg.device || optind != argc) {
        usage(stderr);
        return 2;
    }
    cfg.probe_ms = probe_ms != UINT_MAX ? probe_ms : cfg.deadline_ms / 2;
    int sigfd = cmdline_stop_signals();
    if (sigfd < 0) {
        perror("understudy-netfront: signalfd");
        return 1;
    }
    setvbuf(stderr, NULL, _IOLBF, 0);
    struct nf_dev *d = calloc(1, sizeof(*d));
    if (!d) {
        perror("understudy-netfront");
        return 1;
    }
    int rc = 1;
    if (nf_dev_open(d, &cfg) == 0 && nf_dev_run(d, sigfd) == 0)
        rc = 0;
    nf_dev_close(d);
    free(d);
    close(sigfd);
    return rc;
}
