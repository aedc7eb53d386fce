/* xlcfg.c - the xl config subset the libxl driver understands. */
#define _GNU_SOURCE
#include "xlcfg.h"

#include <ctype.h>
#include <errno.h>
#include <libxl_utils.h>
#include <libxlutil.h>
#include <stdlib.h>
#include <string.h>

static const char *const known[] = {
    "name",       "type",     "builder",     "memory",     "maxmem",        "vcpus",
    "maxvcpus",   "kernel",   "ramdisk",     "cmdline",    "root",          "extra",
    "bootloader", "disk",     "vif",         "pci",        "driver_domain", "on_poweroff",
    "on_reboot",  "on_crash", "on_watchdog", "cpu_weight",
};

/* Refuse top-level keys outside the subset (libxlutil has no iterator). */
static int check_keys(const char *path, FILE *err)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    unsigned n = 0;
    int rc = 0;
    while ((got = getline(&line, &cap, f)) >= 0) {
        n++;
        /* libxlutil's lexer asserts (aborts) on a NUL inside a quoted string. */
        if (memchr(line, '\0', (size_t)got)) {
            fprintf(err, "%s:%u: a NUL byte: not a text file\n", path, n);
            rc = -1;
            break;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!isalpha((unsigned char)*p) && *p != '_')
            continue;
        const char *s = p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        size_t len = (size_t)(p - s);
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '=')
            continue;
        bool ok = false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !ok; i++)
            ok = strlen(known[i]) == len && !strncmp(known[i], s, len);
        if (!ok) {
            fprintf(err,
                    "%s:%u: '%.*s' is not supported by shadowd's libxl driver (it knows:", path, n,
                    (int)len, s);
            for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                fprintf(err, " %s", known[i]);
            fprintf(err, ")\n");
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

static char *opt_str(XLU_Config *cfg, const char *key)
{
    const char *v = NULL;
    if (xlu_cfg_get_string(cfg, key, &v, 1) || !v)
        return NULL;
    return strdup(v);
}

static int parse_mac(const char *s, libxl_mac mac)
{
    unsigned b[6];
    char end;
    if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &end) != 6)
        return -1;
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)b[i];
    return 0;
}

/* One vif spec: "key=value,key=value" with mac, bridge, script, ip, backend,
 * vifname, model, rate. */
static int parse_vif(XLU_Config *cfg, const char *path, const char *spec, libxl_device_nic *nic,
                     FILE *err)
{
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return -1;
    int rc = 0;
    for (char *kv = strtok_r(copy, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
        while (*kv == ' ')
            kv++;
        char *eq = strchr(kv, '=');
        if (!eq) {
            fprintf(err, "%s: vif '%s': '%s' is not key=value\n", path, spec, kv);
            rc = -1;
            break;
        }
        *eq = 0;
        const char *k = kv, *v = eq + 1;
        char **field = !strcmp(k, "bridge")    ? &nic->bridge
                       : !strcmp(k, "script")  ? &nic->script
                       : !strcmp(k, "ip")      ? &nic->ip
                       : !strcmp(k, "backend") ? &nic->backend_domname
                       : !strcmp(k, "vifname") ? &nic->ifname
                       : !strcmp(k, "model")   ? &nic->model
                                               : NULL;
        if (field) {
            free(*field);
            *field = strdup(v);
        } else if (!strcmp(k, "mac")) {
            if (parse_mac(v, nic->mac) < 0) {
                fprintf(err, "%s: vif '%s': bad mac '%s'\n", path, spec, v);
                rc = -1;
            }
        } else if (!strcmp(k, "rate")) {
            if (xlu_vif_parse_rate(cfg, v, nic)) {
                fprintf(err, "%s: vif '%s': bad rate '%s'\n", path, spec, v);
                rc = -1;
            }
        } else {
            fprintf(err,
                    "%s: vif '%s': '%s' is not supported (mac, bridge, script, ip, backend, "
                    "vifname, model, rate)\n",
                    path, spec, k);
            rc = -1;
        }
    }
    free(copy);
    return rc;
}

static int list_count(XLU_Config *cfg, const char *key, XLU_ConfigList **l)
{
    int n = 0;
    if (xlu_cfg_get_list(cfg, key, l, &n, 1))
        return 0;
    return n;
}

static int action(const char *path, XLU_Config *cfg, const char *key, libxl_action_on_shutdown *out,
                  FILE *err)
{
    const char *v = NULL;
    if (xlu_cfg_get_string(cfg, key, &v, 1) || !v)
        return 0;
    if (libxl_action_on_shutdown_from_string(v, out)) {
        fprintf(err, "%s: %s = '%s' is not a shutdown action\n", path, key, v);
        return -1;
    }
    return 0;
}

int sd_xlcfg_load(libxl_ctx *ctx, const char *path, const char *name, FILE *err,
                  libxl_domain_config *out)
{
    libxl_domain_config_init(out);
    if (check_keys(path, err) < 0)
        return -1;
    XLU_Config *cfg = xlu_cfg_init(err, path);
    if (!cfg) {
        fprintf(err, "%s: xlu_cfg_init: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = -1, e = xlu_cfg_readfile(cfg, path);
    if (e) {
        fprintf(err, "%s: cannot parse: %s\n", path, strerror(e));
        goto out;
    }
    libxl_domain_create_info *c = &out->c_info;
    libxl_domain_build_info *b = &out->b_info;
    const char *v = NULL;
    if (xlu_cfg_get_string(cfg, "name", &v, 0)) {
        fprintf(err, "%s: no name = \"...\"\n", path);
        goto out;
    }
    if (strcmp(v, name)) {
        fprintf(err, "%s: name = \"%s\", but shadowd's config calls this domain '%s'\n", path, v,
                name);
        goto out;
    }
    c->name = strdup(v);
    c->type = LIBXL_DOMAIN_TYPE_PV;
    if (!xlu_cfg_get_string(cfg, "type", &v, 1) && v) {
        if (libxl_domain_type_from_string(v, &c->type) || c->type == LIBXL_DOMAIN_TYPE_INVALID) {
            fprintf(err, "%s: type = \"%s\": use pv, pvh or hvm\n", path, v);
            goto out;
        }
    } else if (!xlu_cfg_get_string(cfg, "builder", &v, 1) && v && !strcmp(v, "hvm")) {
        c->type = LIBXL_DOMAIN_TYPE_HVM;
    }
    libxl_uuid_generate(&c->uuid);
    long l;
    if (!xlu_cfg_get_long(cfg, "driver_domain", &l, 1))
        libxl_defbool_set(&c->driver_domain, l != 0);
    libxl_domain_build_info_init_type(b, c->type);
    if (!xlu_cfg_get_long(cfg, "memory", &l, 1)) {
        if (l <= 0) {
            fprintf(err, "%s: memory = %ld: must be positive (MiB)\n", path, l);
            goto out;
        }
        b->target_memkb = b->max_memkb = (uint64_t)l * 1024;
    }
    if (!xlu_cfg_get_long(cfg, "maxmem", &l, 1))
        b->max_memkb = (uint64_t)l * 1024;
    long vcpus = 1;
    if (!xlu_cfg_get_long(cfg, "vcpus", &l, 1)) {
        if (l <= 0 || l > 4096) {
            fprintf(err, "%s: vcpus = %ld: out of range\n", path, l);
            goto out;
        }
        vcpus = l;
    }
    b->max_vcpus = (int)vcpus;
    if (!xlu_cfg_get_long(cfg, "maxvcpus", &l, 1) && l >= vcpus)
        b->max_vcpus = (int)l;
    /* The scheduler's weight, as xl takes it (credit and credit2 honour it;
     * every domain's default is 256). */
    if (!xlu_cfg_get_long(cfg, "cpu_weight", &l, 1)) {
        if (l < 1 || l > 65535) {
            fprintf(err, "%s: cpu_weight = %ld: out of range (1-65535)\n", path, l);
            goto out;
        }
        b->sched_params.weight = (int)l;
    }
    if (ctx) {
        if (libxl_cpu_bitmap_alloc(ctx, &b->avail_vcpus, b->max_vcpus)) {
            fprintf(err, "%s: cannot allocate the vcpu bitmap\n", path);
            goto out;
        }
        for (long i = 0; i < vcpus; i++)
            libxl_bitmap_set(&b->avail_vcpus, (int)i);
    }
    b->kernel = opt_str(cfg, "kernel");
    b->ramdisk = opt_str(cfg, "ramdisk");
    b->bootloader = opt_str(cfg, "bootloader");
    char *cmdline = opt_str(cfg, "cmdline");
    if (!cmdline) { /* xl's older root= and extra= */
        char *root = opt_str(cfg, "root"), *extra = opt_str(cfg, "extra");
        if (root || extra) {
            if (asprintf(&cmdline, "%s%s%s%s", root ? "root=" : "", root ? root : "",
                         root && extra ? " " : "", extra ? extra : "") < 0)
                cmdline = NULL;
        }
        free(root);
        free(extra);
    }
    b->cmdline = cmdline;
    if (c->type == LIBXL_DOMAIN_TYPE_PV && !b->kernel && !b->bootloader) {
        fprintf(err, "%s: a pv domain needs kernel = \"...\" or bootloader = \"...\"\n", path);
        goto out;
    }
    XLU_ConfigList *list;
    int n = list_count(cfg, "disk", &list);
    if (n) {
        out->disks = calloc((size_t)n, sizeof(*out->disks));
        if (!out->disks)
            goto out;
        for (int i = 0; i < n; i++) {
            const char *spec = xlu_cfg_get_listitem(list, i);
            libxl_device_disk_init(&out->disks[i]);
            out->num_disks = i + 1;
            if (!spec || xlu_disk_parse(cfg, 1, &spec, &out->disks[i])) {
                fprintf(err, "%s: disk %d ('%s') does not parse\n", path, i, spec ? spec : "");
                goto out;
            }
        }
    }
    n = list_count(cfg, "vif", &list);
    if (n) {
        out->nics = calloc((size_t)n, sizeof(*out->nics));
        if (!out->nics)
            goto out;
        for (int i = 0; i < n; i++) {
            const char *spec = xlu_cfg_get_listitem(list, i);
            libxl_device_nic_init(&out->nics[i]);
            out->num_nics = i + 1;
            out->nics[i].devid = i;
            if (!spec || parse_vif(cfg, path, spec, &out->nics[i], err) < 0)
                goto out;
        }
    }
    n = list_count(cfg, "pci", &list);
    if (n) {
        out->pcidevs = calloc((size_t)n, sizeof(*out->pcidevs));
        if (!out->pcidevs)
            goto out;
        for (int i = 0; i < n; i++) {
            const char *spec = xlu_cfg_get_listitem(list, i);
            libxl_device_pci_init(&out->pcidevs[i]);
            out->num_pcidevs = i + 1;
            if (!spec || xlu_pci_parse_spec_string(cfg, &out->pcidevs[i], spec)) {
                fprintf(err, "%s: pci %d ('%s') does not parse\n", path, i, spec ? spec : "");
                goto out;
            }
        }
    }
    if (action(path, cfg, "on_poweroff", &out->on_poweroff, err) < 0 ||
        action(path, cfg, "on_reboot", &out->on_reboot, err) < 0 ||
        action(path, cfg, "on_crash", &out->on_crash, err) < 0 ||
        action(path, cfg, "on_watchdog", &out->on_watchdog, err) < 0)
        goto out;
    if (!c->name) {
        fprintf(err, "%s: out of memory\n", path);
        goto out;
    }
    rc = 0;
out:
    xlu_cfg_destroy(cfg);
    if (rc < 0)
        libxl_domain_config_dispose(out);
    return rc;
}
