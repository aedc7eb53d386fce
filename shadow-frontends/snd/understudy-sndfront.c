/* understudy-sndfront - the shadow sndif frontend daemon: one virtual sound
 * card of the guest, connected to whatever sndif backend the toolstack wires
 * the frontend dir to, its streams played and captured by programs through
 * the ALSA plugin pcm_understudy, surviving the backend's death (see
 * README.md). */
#define _GNU_SOURCE
#include "cmdline.h"
#include "sn_dev.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: understudy-sndfront --device DIR [--socket PATH] [--deadline-ms MS]\n"
            "                           [--shadow on|off] [-v]\n"
            "  --device DIR     the frontend dir, e.g. device/vsnd/0 (relative to the domain)\n"
            "  --socket PATH    where the ALSA plugin connects (default %s,\n"
            "                   %%u the device's number)\n"
            "  --deadline-ms MS a request unanswered, or a playing stream's position\n"
            "                   unmoved, this long means a hung backend (default 1000)\n"
            "  --shadow on|off  off: restart only - a new backend gets no stream back, the\n"
            "                   programs' audio goes nowhere until they prepare again\n"
            "                   (default on)\n"
            "  -v               log every stream's opening and parameters\n",
            SNP_DEFAULT_SOCKET);
}

/* The default socket: SNP_DEFAULT_SOCKET with the number of device/vsnd/<n>. */
static int default_socket(const char *device, char *buf, size_t len)
{
    const char *slash = strrchr(device, '/');
    unsigned n;
    if (!slash || cmdline_uint(slash + 1, 0, 1u << 20, &n) < 0)
        return -1;
    snprintf(buf, len, SNP_DEFAULT_SOCKET, n);
    return 0;
}

int main(int argc, char **argv)
{
    struct sn_config cfg = {.deadline_ms = 1000, .shadow = true};
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'},
                                         {"socket", required_argument, NULL, 'S'},
                                         {"deadline-ms", required_argument, NULL, 't'},
                                         {"shadow", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
        switch (o) {
        case 'd':
            cfg.device = optarg;
            break;
        case 'S':
            cfg.socket = optarg;
            break;
        case 't':
            if (cmdline_uint(optarg, 10, 3600000, &cfg.deadline_ms) < 0) {
                fprintf(stderr, "understudy-sndfront: --deadline-ms '%s': want 10..3600000\n",
                        optarg);
                return 2;
            }
            break;
        case 's':
            if (cmdline_onoff("understudy-sndfront", "--shadow", optarg, &cfg.shadow) < 0)
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
    char sock[108];
    if (!cfg.socket) {
        if (default_socket(cfg.device, sock, sizeof(sock)) < 0) {
            fprintf(stderr,
                    "understudy-sndfront: --device '%s' does not end in a number: "
                    "give --socket\n",
                    cfg.device);
            return 2;
        }
        cfg.socket = sock;
    }
    int sigfd = cmdline_stop_signals();
    if (sigfd < 0) {
        perror("understudy-sndfront: signalfd");
        return 1;
    }
    setvbuf(stderr, NULL, _IOLBF, 0);
    struct sn_dev *d = calloc(1, sizeof(*d));
    if (!d) {
        perror("understudy-sndfront");
        return 1;
    }
    int rc = 1;
    if (sn_dev_open(d, &cfg) == 0 && sn_dev_run(d, sigfd) == 0)
        rc = 0;
    sn_dev_close(d);
    free(d);
    close(sigfd);
    return rc;
}
