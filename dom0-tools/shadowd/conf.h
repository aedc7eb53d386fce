/* conf.h - shadowd's configuration file (see dom0-tools/README.md,
 * "Configuration"): global options, then one `domain NAME { ... }` block per
 * driver domain. Any domain option may also appear at the top level, where
 * it is the default for every domain. */
#ifndef SD_CONF_H
#define SD_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum sd_driver_kind {
    SD_DRIVER_NONE = 0,
    SD_DRIVER_XENSIM,
    SD_DRIVER_LIBXL,
    SD_DRIVER_LIBVIRT,
    SD_DRIVER_KINDS,
};

struct sd_domconf {
    char name[64];
    char *file; /* where it was declared, for messages */
    unsigned line;
    enum sd_driver_kind driver;
    /* xensim */
    char **argv; /* NULL-terminated */
    unsigned argc;
    char **env; /* "K=V", NULL-terminated */
    unsigned envc;
    char *log;
    /* libxl */
    char *xl_config;
    bool late_vifs;       /* attach the config's vifs once the domain runs */
    unsigned boot_weight; /* scheduler weight from create until it serves; 0: off */
    /* libvirt: the domain definition (XML) it is created from */
    char *libvirt_xml;
    bool standby; /* keep a warm standby booted ahead */
    /* detection and restart policy */
    uint64_t heartbeat_timeout_ms; /* 0: heartbeat not checked */
    uint64_t pause_timeout_ms;     /* paused and heartbeat still this long = hang; 0: off */
    uint64_t boot_timeout_ms;      /* first heartbeat due this long after a start */
    uint64_t restart_delay_ms;     /* before the first restart of a streak */
    unsigned restart_budget;       /* restarts allowed per restart_window_ms */
    uint64_t restart_window_ms;
    uint64_t backoff_initial_ms; /* before the 2nd restart of a streak; doubles */
    uint64_t backoff_max_ms;
    uint64_t stable_ms;            /* up this long ends a streak */
    uint64_t reconnect_timeout_ms; /* frontends given this long to reconnect */
    unsigned max_devices;
    uint32_t set; /* bit per option given in the block (internal) */
};

struct sd_conf {
    char *path;
    char *state_dir;
    char *run_dir;
    char *xensim_dir;            /* NULL: $XENSIM_DIR */
    char *libvirt_uri;           /* NULL: libvirt's default */
    char *user;                  /* the unprivileged part's user; NULL: the default (privdrop.h) */
    unsigned report_budget;      /* report-triggered recoveries per guest per window */
    uint64_t report_window_ms;   /* the window of report_budget */
    uint64_t report_interval_ms; /* reports acted on at most this often per device */
    uint64_t corroboration_ms;   /* reports of different guests count together within */
    char **ignore_keys;          /* extra backend-published key patterns */
    unsigned nignore;
    struct sd_domconf defaults;
    struct sd_domconf *doms;
    unsigned ndoms;
};

/* Parse path. Every mistake is printed to err as "FILE:LINE: message";
 * returns the config, or NULL after at least one message. */
struct sd_conf *sd_conf_load(const char *path, FILE *err);
void sd_conf_free(struct sd_conf *c);

/* The domain named name, or NULL. */
const struct sd_domconf *sd_conf_domain(const struct sd_conf *c, const char *name);
const char *sd_driver_name(enum sd_driver_kind k);

/* The configuration as shadowd understood it (for -n -v and the docs). */
void sd_conf_dump(const struct sd_conf *c, FILE *out);

#endif
