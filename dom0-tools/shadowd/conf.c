/* conf.c - shadowd's configuration file: a line-oriented tokenizer, one
 * table of options, defaults, and the checks that give every mistake its
 * own "FILE:LINE: message". */
#define _GNU_SOURCE
#include "conf.h"

#include "sd_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINE    4096
#define MAX_TOKENS  64
#define MAX_ERRORS  50
#define MAX_DOMAINS 64

enum otype {
    O_PATH,   /* one absolute path */
    O_WORDS,  /* one or more words: argv */
    O_KV,     /* K=V, repeatable */
    O_DUR,    /* a duration */
    O_DUROFF, /* a duration or "off" (0) */
    O_UINT,   /* decimal in [min, max] */
    O_DRIVER, /* xensim | libxl | libvirt */
    O_ONOFF,  /* on | off */
    O_STR,    /* one word of printable ASCII */
    O_KEYS,   /* key patterns, repeatable, appended */
};

enum oscope {
    S_GLOBAL,  /* top level only, in struct sd_conf */
    S_DOMAIN,  /* domain blocks only, in struct sd_domconf */
    S_DEFAULT, /* domain option that may also be a top-level default */
};

struct opt {
    const char *name;
    enum otype type;
    enum oscope scope;
    size_t off;
    uint64_t min, max;
    enum sd_driver_kind only; /* NONE: any driver */
};

#define G(f) offsetof(struct sd_conf, f)
#define D(f) offsetof(struct sd_domconf, f)
static const struct opt opts[] = {
    {"state-dir", O_PATH, S_GLOBAL, G(state_dir), 0, 0, SD_DRIVER_NONE},
    {"run-dir", O_PATH, S_GLOBAL, G(run_dir), 0, 0, SD_DRIVER_NONE},
    {"xensim-dir", O_PATH, S_GLOBAL, G(xensim_dir), 0, 0, SD_DRIVER_NONE},
    {"report-budget", O_UINT, S_GLOBAL, G(report_budget), 0, 1000, SD_DRIVER_NONE},
    {"report-window", O_DUR, S_GLOBAL, G(report_window_ms), 1, 0, SD_DRIVER_NONE},
    {"report-interval", O_DUR, S_GLOBAL, G(report_interval_ms), 0, 0, SD_DRIVER_NONE},
    {"corroboration-window", O_DUR, S_GLOBAL, G(corroboration_ms), 1, 0, SD_DRIVER_NONE},
    {"ignore-backend-key", O_KEYS, S_GLOBAL, 0, 0, 0, SD_DRIVER_NONE},
    {"libvirt-uri", O_STR, S_GLOBAL, G(libvirt_uri), 0, 0, SD_DRIVER_NONE},
    {"user", O_STR, S_GLOBAL, G(user), 0, 0, SD_DRIVER_NONE},
    {"driver", O_DRIVER, S_DEFAULT, D(driver), 0, 0, SD_DRIVER_NONE},
    {"command", O_WORDS, S_DOMAIN, D(argv), 0, 0, SD_DRIVER_XENSIM},
    {"env", O_KV, S_DOMAIN, D(env), 0, 0, SD_DRIVER_XENSIM},
    {"log", O_PATH, S_DOMAIN, D(log), 0, 0, SD_DRIVER_XENSIM},
    {"xl-config", O_PATH, S_DOMAIN, D(xl_config), 0, 0, SD_DRIVER_LIBXL},
    {"late-vifs", O_ONOFF, S_DOMAIN, D(late_vifs), 0, 0, SD_DRIVER_LIBXL},
    {"boot-weight", O_UINT, S_DOMAIN, D(boot_weight), 0, 65535, SD_DRIVER_LIBXL},
    {"libvirt-xml", O_PATH, S_DOMAIN, D(libvirt_xml), 0, 0, SD_DRIVER_LIBVIRT},
    {"standby", O_ONOFF, S_DEFAULT, D(standby), 0, 0, SD_DRIVER_NONE},
    {"heartbeat-timeout", O_DUROFF, S_DEFAULT, D(heartbeat_timeout_ms), 0, 0, SD_DRIVER_NONE},
    {"pause-timeout", O_DUROFF, S_DEFAULT, D(pause_timeout_ms), 0, 0, SD_DRIVER_NONE},
    {"boot-timeout", O_DUR, S_DEFAULT, D(boot_timeout_ms), 1, 0, SD_DRIVER_NONE},
    {"restart-delay", O_DUR, S_DEFAULT, D(restart_delay_ms), 0, 0, SD_DRIVER_NONE},
    {"restart-budget", O_UINT, S_DEFAULT, D(restart_budget), 0, 64, SD_DRIVER_NONE},
    {"restart-window", O_DUR, S_DEFAULT, D(restart_window_ms), 1, 0, SD_DRIVER_NONE},
    {"backoff-initial", O_DUR, S_DEFAULT, D(backoff_initial_ms), 0, 0, SD_DRIVER_NONE},
    {"backoff-max", O_DUR, S_DEFAULT, D(backoff_max_ms), 0, 0, SD_DRIVER_NONE},
    {"stable-after", O_DUR, S_DEFAULT, D(stable_ms), 1, 0, SD_DRIVER_NONE},
    {"reconnect-timeout", O_DUR, S_DEFAULT, D(reconnect_timeout_ms), 1, 0, SD_DRIVER_NONE},
    {"max-devices", O_UINT, S_DEFAULT, D(max_devices), 1, 4096, SD_DRIVER_NONE},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

struct parser {
    const char *file;
    unsigned line;
    unsigned errors;
    FILE *err;
    struct sd_conf *c;
    struct sd_domconf *dom;    /* the open block, or NULL */
    struct sd_domconf scratch; /* a refused block: checked, then dropped */
    unsigned lines[NOPTS];     /* where each option was set in the open block */
    unsigned glines[NOPTS];    /* ... and at the top level */
    unsigned dom_lines[MAX_DOMAINS][NOPTS];
};

static void perr(struct parser *p, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void perr(struct parser *p, unsigned line, const char *fmt, ...)
{
    if (++p->errors > MAX_ERRORS)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(p->err, "%s:%u: ", p->file, line);
    vfprintf(p->err, fmt, ap);
    fputc('\n', p->err);
    va_end(ap);
    if (p->errors == MAX_ERRORS)
        fprintf(p->err, "%s: too many errors, stopping\n", p->file);
}

const char *sd_driver_name(enum sd_driver_kind k)
{
    switch (k) {
    case SD_DRIVER_XENSIM:
        return "xensim";
    case SD_DRIVER_LIBXL:
        return "libxl";
    case SD_DRIVER_LIBVIRT:
        return "libvirt";
    default:
        return "none";
    }
}

static void builtin_defaults(struct sd_domconf *d)
{
    d->heartbeat_timeout_ms = 3000;
    d->pause_timeout_ms = 2000;
    d->boot_timeout_ms = 30000;
    d->restart_delay_ms = 0;
    d->restart_budget = 5;
    d->restart_window_ms = 600000;
    d->backoff_initial_ms = 500;
    d->backoff_max_ms = 30000;
    d->stable_ms = 60000;
    d->reconnect_timeout_ms = 30000;
    d->max_devices = 256;
}

/* Split a line into tokens; quoted tokens may hold spaces and \" \\ \n \t.
 * Returns the count, or -1 after an error message. */
static int tokenize(struct parser *p, char *s, char **tok)
{
    int n = 0;
    char *o = s;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (!*s || *s == '#')
            break;
        if (n == MAX_TOKENS) {
            perr(p, p->line, "more than %d words on one line", MAX_TOKENS);
            return -1;
        }
        tok[n++] = o;
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s) {
                    perr(p, p->line, "unterminated quoted string");
                    return -1;
                }
                if (*s == '"') {
                    s++;
                    break;
                }
                if (*s == '\\') {
                    s++;
                    char e = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
                    if (e != '"' && e != '\\' && e != '\n' && e != '\t') {
                        perr(p, p->line,
                             "unknown escape '\\%c' in a quoted string (use \\\" \\\\ "
                             "\\n \\t)",
                             *s ? *s : ' ');
                        return -1;
                    }
                    *o++ = e;
                    s++;
                    continue;
                }
                *o++ = *s++;
            }
            if (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '#') {
                perr(p, p->line, "text right after a closing quote");
                return -1;
            }
        } else {
            while (*s && *s != ' ' && *s != '\t' && *s != '\r')
                *o++ = *s++;
        }
        /* Tokens are copied down in place: the write pointer o never passes
         * the read pointer s, as quotes and escapes only shrink the text. */
        char *end = o;
        if (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        *end = 0;
        o = end + 1;
    }
    return n;
}

static char *xstrdup(struct parser *p, const char *s)
{
    char *d = strdup(s);
    if (!d)
        perr(p, p->line, "out of memory");
    return d;
}

/* Append strdup(s) to a NULL-terminated vector. */
static int vec_add(struct parser *p, char ***v, unsigned *n, const char *s)
{
    char **nv = realloc(*v, (*n + 2) * sizeof(**v));
    if (!nv) {
        perr(p, p->line, "out of memory");
        return -1;
    }
    *v = nv;
    nv[*n] = xstrdup(p, s);
    if (!nv[*n])
        return -1;
    nv[++*n] = NULL;
    return 0;
}

static void vec_free(char **v)
{
    for (char **i = v; i && *i; i++)
        free(*i);
    free(v);
}

static int set_option(struct parser *p, const struct opt *o, char **args, int nargs)
{
    void *base = o->scope == S_GLOBAL ? (void *)p->c : p->dom ? (void *)p->dom : &p->c->defaults;
    void *field = (char *)base + o->off;
    if (o->type != O_WORDS && o->type != O_KEYS && nargs != 1) {
        perr(p, p->line, "'%s' takes exactly one value", o->name);
        return -1;
    }
    if (nargs < 1) {
        perr(p, p->line, "'%s' needs at least one value", o->name);
        return -1;
    }
    switch (o->type) {
    case O_PATH: {
        char **s = field;
        if (args[0][0] != '/') {
            perr(p, p->line, "'%s' must be an absolute path, not '%s'", o->name, args[0]);
            return -1;
        }
        if (strlen(args[0]) >= 1024) {
            perr(p, p->line, "'%s': path longer than 1023 bytes", o->name);
            return -1;
        }
        if (*s) {
            perr(p, p->line, "'%s' given twice", o->name);
            return -1;
        }
        *s = xstrdup(p, args[0]);
        return *s ? 0 : -1;
    }
    case O_WORDS: {
        struct sd_domconf *d = base;
        if (d->argv) {
            perr(p, p->line, "'%s' given twice", o->name);
            return -1;
        }
        for (int i = 0; i < nargs; i++)
            if (vec_add(p, &d->argv, &d->argc, args[i]) < 0)
                return -1;
        return 0;
    }
    case O_KV: {
        struct sd_domconf *d = base;
        const char *eq = strchr(args[0], '=');
        if (!eq || eq == args[0]) {
            perr(p, p->line, "'%s' takes NAME=VALUE, not '%s'", o->name, args[0]);
            return -1;
        }
        return vec_add(p, &d->env, &d->envc, args[0]);
    }
    case O_DUR:
    case O_DUROFF: {
        uint64_t ms;
        if (o->type == O_DUROFF && !strcmp(args[0], "off")) {
            ms = 0;
        } else if (sd_parse_duration(args[0], &ms) < 0) {
            perr(p, p->line, "'%s': '%s' is not a duration (a number with ms, s, m or h%s)",
                 o->name, args[0], o->type == O_DUROFF ? "; or off" : "");
            return -1;
        } else if (ms < o->min) {
            perr(p, p->line, "'%s' must be more than 0", o->name);
            return -1;
        }
        *(uint64_t *)field = ms;
        return 0;
    }
    case O_UINT: {
        uint64_t v;
        if (sd_parse_u64(args[0], o->max, &v) < 0 || v < o->min) {
            perr(p, p->line, "'%s': '%s' is not a whole number from %llu to %llu", o->name, args[0],
                 (unsigned long long)o->min, (unsigned long long)o->max);
            return -1;
        }
        *(unsigned *)field = (unsigned)v;
        return 0;
    }
    case O_DRIVER: {
        enum sd_driver_kind k = !strcmp(args[0], "xensim")    ? SD_DRIVER_XENSIM
                                : !strcmp(args[0], "libxl")   ? SD_DRIVER_LIBXL
                                : !strcmp(args[0], "libvirt") ? SD_DRIVER_LIBVIRT
                                                              : SD_DRIVER_NONE;
        if (k == SD_DRIVER_NONE) {
            perr(p, p->line, "unknown driver '%s' (known: xensim, libxl, libvirt)", args[0]);
            return -1;
        }
        *(enum sd_driver_kind *)field = k;
        return 0;
    }
    case O_ONOFF:
        if (strcmp(args[0], "on") && strcmp(args[0], "off")) {
            perr(p, p->line, "'%s' takes on or off, not '%s'", o->name, args[0]);
            return -1;
        }
        *(bool *)field = !strcmp(args[0], "on");
        return 0;
    case O_STR: {
        char **s = field;
        for (const char *c = args[0]; *c; c++)
            if (*c <= ' ' || *c > '~') {
                perr(p, p->line, "'%s': '%s' holds a space or a non-ASCII byte", o->name, args[0]);
                return -1;
            }
        if (!args[0][0] || strlen(args[0]) >= 1024) {
            perr(p, p->line, "'%s': empty, or longer than 1023 bytes", o->name);
            return -1;
        }
        if (*s) {
            perr(p, p->line, "'%s' given twice", o->name);
            return -1;
        }
        *s = xstrdup(p, args[0]);
        return *s ? 0 : -1;
    }
    case O_KEYS:
        for (int i = 0; i < nargs; i++) {
            const char *star = strchr(args[i], '*');
            if (!args[i][0] || (star && star[1]) || strchr(args[i], '/')) {
                perr(p, p->line, "'%s': '%s' is not a key name or a prefix ending in '*'", o->name,
                     args[i]);
                return -1;
            }
            if (vec_add(p, &p->c->ignore_keys, &p->c->nignore, args[i]) < 0)
                return -1;
        }
        return 0;
    }
    return -1;
}

static void domconf_free(struct sd_domconf *d);

/* A block that cannot be kept is still read, so its own mistakes show. */
static void open_scratch(struct parser *p)
{
    domconf_free(&p->scratch);
    memset(&p->scratch, 0, sizeof(p->scratch));
    builtin_defaults(&p->scratch);
    snprintf(p->scratch.name, sizeof(p->scratch.name), "(refused)");
    p->dom = &p->scratch;
    memset(p->lines, 0, sizeof(p->lines));
}

static void open_domain(struct parser *p, char **tok, int n)
{
    if (p->dom) {
        perr(p, p->line, "domain blocks do not nest (domain '%s' is still open)", p->dom->name);
        return;
    }
    if (n != 3 || strcmp(tok[2], "{")) {
        perr(p, p->line, "expected: domain NAME {");
        if (!strcmp(tok[n - 1], "{"))
            open_scratch(p);
        return;
    }
    if (!sd_valid_name(tok[1]) || strspn(tok[1], "0123456789") == strlen(tok[1])) {
        perr(p, p->line, "domain name '%s': use 1 to 63 of A-Z a-z 0-9 _ . -, not only digits",
             tok[1]);
        open_scratch(p);
        return;
    }
    if (sd_conf_domain(p->c, tok[1])) {
        perr(p, p->line, "domain '%s' declared twice (first at %s:%u)", tok[1],
             sd_conf_domain(p->c, tok[1])->file, sd_conf_domain(p->c, tok[1])->line);
        open_scratch(p);
        return;
    }
    if (p->c->ndoms == MAX_DOMAINS) {
        perr(p, p->line, "more than %d domains", MAX_DOMAINS);
        open_scratch(p);
        return;
    }
    struct sd_domconf *nd = realloc(p->c->doms, (p->c->ndoms + 1) * sizeof(*nd));
    if (!nd) {
        perr(p, p->line, "out of memory");
        return;
    }
    p->c->doms = nd;
    struct sd_domconf *d = &nd[p->c->ndoms++];
    memset(d, 0, sizeof(*d));
    builtin_defaults(d);
    snprintf(d->name, sizeof(d->name), "%s", tok[1]);
    d->file = strdup(p->file);
    d->line = p->line;
    p->dom = d;
    memset(p->lines, 0, sizeof(p->lines));
}

static void statement(struct parser *p, char **tok, int n)
{
    if (!strcmp(tok[0], "domain")) {
        open_domain(p, tok, n);
        return;
    }
    if (!strcmp(tok[0], "}")) {
        if (n != 1)
            perr(p, p->line, "'}' must be alone on its line");
        else if (!p->dom)
            perr(p, p->line, "'}' without an open domain block");
        else {
            if (p->dom != &p->scratch)
                memcpy(p->dom_lines[p->dom - p->c->doms], p->lines, sizeof(p->lines));
            p->dom = NULL;
        }
        return;
    }
    size_t i = 0;
    while (i < NOPTS && strcmp(opts[i].name, tok[0]))
        i++;
    if (i == NOPTS) {
        perr(p, p->line, "unknown option '%s'%s", tok[0],
             p->dom ? " in a domain block" : " (see dom0-tools/README.md, Configuration)");
        return;
    }
    const struct opt *o = &opts[i];
    if (o->scope == S_GLOBAL && p->dom) {
        perr(p, p->line, "'%s' is a global option; put it outside the domain blocks", o->name);
        return;
    }
    if (o->scope == S_DOMAIN && !p->dom) {
        perr(p, p->line, "'%s' belongs inside a domain block", o->name);
        return;
    }
    unsigned *seen = p->dom ? p->lines : p->glines;
    if (seen[i] && o->type != O_KV && o->type != O_KEYS) {
        perr(p, p->line, "'%s' given twice%s%s (first at line %u)", o->name,
             p->dom ? " in domain " : "", p->dom ? p->dom->name : "", seen[i]);
        return;
    }
    if (set_option(p, o, tok + 1, n - 1) == 0) {
        seen[i] = p->line;
        if (p->dom) {
            p->dom->set |= 1u << i;
        } else if (o->scope == S_DEFAULT) {
            p->c->defaults.set |= 1u << i;
        }
    }
}

/* Apply top-level defaults, then check each domain as a whole. */
static void finish(struct parser *p)
{
    struct sd_conf *c = p->c;
    for (unsigned k = 0; k < c->ndoms; k++) {
        struct sd_domconf *d = &c->doms[k];
        for (size_t i = 0; i < NOPTS; i++) {
            if (opts[i].scope != S_DEFAULT || (d->set & (1u << i)) ||
                !(c->defaults.set & (1u << i)))
                continue;
            size_t sz = opts[i].type == O_UINT     ? sizeof(unsigned)
                        : opts[i].type == O_DRIVER ? sizeof(enum sd_driver_kind)
                        : opts[i].type == O_ONOFF  ? sizeof(bool)
                                                   : sizeof(uint64_t);
            memcpy((char *)d + opts[i].off, (char *)&c->defaults + opts[i].off, sz);
        }
        unsigned *lines = p->dom_lines[k];
        if (d->driver == SD_DRIVER_NONE) {
            perr(p, d->line,
                 "domain '%s' has no driver (add: driver xensim, driver libxl, or driver libvirt)",
                 d->name);
            continue;
        }
        for (size_t i = 0; i < NOPTS; i++)
            if (lines[i] && opts[i].only != SD_DRIVER_NONE && opts[i].only != d->driver)
                perr(p, lines[i], "'%s' is for the %s driver; domain '%s' uses %s", opts[i].name,
                     sd_driver_name(opts[i].only), d->name, sd_driver_name(d->driver));
        if (d->driver == SD_DRIVER_XENSIM && !d->argv)
            perr(p, d->line, "domain '%s' (xensim) has no 'command' to start it", d->name);
        if (d->driver == SD_DRIVER_XENSIM && d->argv && d->argv[0][0] == '/' &&
            access(d->argv[0], X_OK) < 0)
            perr(p, d->line, "domain '%s': command %s: %s", d->name, d->argv[0], strerror(errno));
        if (d->driver == SD_DRIVER_LIBXL && !d->xl_config)
            perr(p, d->line, "domain '%s' (libxl) has no 'xl-config' file to create it from",
                 d->name);
        if (d->driver == SD_DRIVER_LIBVIRT && !d->libvirt_xml)
            perr(p, d->line,
                 "domain '%s' (libvirt) has no 'libvirt-xml' domain definition to create it from",
                 d->name);
        if (d->standby && strlen(d->name) + strlen(".2") >= sizeof(d->name))
            perr(p, d->line,
                 "domain '%s': with standby on, the name must be at most %zu bytes "
                 "(the standby is called NAME.2)",
                 d->name, sizeof(d->name) - 1 - strlen(".2"));
        for (unsigned j = 0; d->standby && j < c->ndoms; j++) {
            char sbname[80];
            snprintf(sbname, sizeof(sbname), "%s.2", d->name);
            if (!strcmp(c->doms[j].name, sbname))
                perr(p, d->line,
                     "domain '%s': with standby on, its standby is called %s, "
                     "which is also a domain of this file (line %u)",
                     d->name, sbname, c->doms[j].line);
        }
        if (d->backoff_initial_ms > d->backoff_max_ms)
            perr(p, d->line, "domain '%s': backoff-initial is longer than backoff-max", d->name);
    }
    if (c->ndoms == 0)
        perr(p, p->line, "no domain blocks: nothing to watch over");
}

struct sd_conf *sd_conf_load(const char *path, FILE *err)
{
    struct parser p = {.file = path, .err = err};
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
        return NULL;
    }
    struct sd_conf *c = calloc(1, sizeof(*c));
    if (!c) {
        fclose(f);
        fprintf(err, "%s: out of memory\n", path);
        return NULL;
    }
    p.c = c;
    c->path = strdup(path);
    c->report_budget = 3;
    c->report_window_ms = 600000;
    c->report_interval_ms = 1000;
    c->corroboration_ms = 10000;
    builtin_defaults(&c->defaults);
    char *line = NULL, *tok[MAX_TOKENS];
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        p.line++;
        if (len > MAX_LINE) {
            perr(&p, p.line, "line longer than %d bytes", MAX_LINE);
            continue;
        }
        if ((size_t)len != strlen(line)) {
            perr(&p, p.line, "NUL byte in the line");
            continue;
        }
        if (len && line[len - 1] == '\n')
            line[len - 1] = 0;
        int n = tokenize(&p, line, tok);
        if (n > 0)
            statement(&p, tok, n);
    }
    if (ferror(f))
        perr(&p, p.line, "read error: %s", strerror(errno));
    free(line);
    fclose(f);
    if (p.dom == &p.scratch)
        perr(&p, p.line, "end of file inside a refused domain block: missing '}'");
    else if (p.dom)
        perr(&p, p.line, "end of file inside domain '%s' (opened at line %u): missing '}'",
             p.dom->name, p.dom->line);
    else
        finish(&p);
    domconf_free(&p.scratch);
    if (!c->state_dir)
        c->state_dir = strdup("/var/lib/shadowd");
    if (!c->run_dir)
        c->run_dir = strdup("/run/shadowd");
    if (!c->state_dir || !c->run_dir)
        perr(&p, p.line, "out of memory");
    if (p.errors) {
        sd_conf_free(c);
        return NULL;
    }
    return c;
}

static void domconf_free(struct sd_domconf *d)
{
    vec_free(d->argv);
    vec_free(d->env);
    free(d->log);
    free(d->xl_config);
    free(d->libvirt_xml);
    free(d->file);
}

void sd_conf_free(struct sd_conf *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->ndoms; i++)
        domconf_free(&c->doms[i]);
    domconf_free(&c->defaults);
    free(c->doms);
    vec_free(c->ignore_keys);
    free(c->xensim_dir);
    free(c->libvirt_uri);
    free(c->user);
    free(c->run_dir);
    free(c->state_dir);
    free(c->path);
    free(c);
}

const struct sd_domconf *sd_conf_domain(const struct sd_conf *c, const char *name)
{
    for (unsigned i = 0; c && i < c->ndoms; i++)
        if (!strcmp(c->doms[i].name, name))
            return &c->doms[i];
    return NULL;
}

static void dur(FILE *out, const char *name, uint64_t ms)
{
    char b[32];
    sd_format_duration(b, sizeof(b), ms);
    fprintf(out, "    %s %s\n", name, b);
}

void sd_conf_dump(const struct sd_conf *c, FILE *out)
{
    char b[32];
    fprintf(out, "state-dir %s\nrun-dir %s\n", c->state_dir, c->run_dir);
    if (c->xensim_dir)
        fprintf(out, "xensim-dir %s\n", c->xensim_dir);
    if (c->libvirt_uri)
        fprintf(out, "libvirt-uri %s\n", c->libvirt_uri);
    if (c->user)
        fprintf(out, "user %s\n", c->user);
    fprintf(out, "report-budget %u\n", c->report_budget);
    sd_format_duration(b, sizeof(b), c->report_window_ms);
    fprintf(out, "report-window %s\n", b);
    sd_format_duration(b, sizeof(b), c->report_interval_ms);
    fprintf(out, "report-interval %s\n", b);
    sd_format_duration(b, sizeof(b), c->corroboration_ms);
    fprintf(out, "corroboration-window %s\n", b);
    for (unsigned i = 0; i < c->nignore; i++)
        fprintf(out, "ignore-backend-key %s\n", c->ignore_keys[i]);
    for (unsigned k = 0; k < c->ndoms; k++) {
        const struct sd_domconf *d = &c->doms[k];
        fprintf(out, "domain %s {\n    driver %s\n", d->name, sd_driver_name(d->driver));
        if (d->argv) {
            fprintf(out, "    command");
            for (unsigned i = 0; i < d->argc; i++)
                fprintf(out, " \"%s\"", d->argv[i]);
            fputc('\n', out);
        }
        for (unsigned i = 0; i < d->envc; i++)
            fprintf(out, "    env \"%s\"\n", d->env[i]);
        if (d->log)
            fprintf(out, "    log %s\n", d->log);
        if (d->xl_config)
            fprintf(out, "    xl-config %s\n", d->xl_config);
        if (d->driver == SD_DRIVER_LIBXL) {
            fprintf(out, "    late-vifs %s\n", d->late_vifs ? "on" : "off");
            fprintf(out, "    boot-weight %u\n", d->boot_weight);
        }
        if (d->libvirt_xml)
            fprintf(out, "    libvirt-xml %s\n", d->libvirt_xml);
        fprintf(out, "    standby %s\n", d->standby ? "on" : "off");
        if (d->heartbeat_timeout_ms)
            dur(out, "heartbeat-timeout", d->heartbeat_timeout_ms);
        else
            fprintf(out, "    heartbeat-timeout off\n");
        if (d->pause_timeout_ms)
            dur(out, "pause-timeout", d->pause_timeout_ms);
        else
            fprintf(out, "    pause-timeout off\n");
        dur(out, "boot-timeout", d->boot_timeout_ms);
        dur(out, "restart-delay", d->restart_delay_ms);
        fprintf(out, "    restart-budget %u\n", d->restart_budget);
        dur(out, "restart-window", d->restart_window_ms);
        dur(out, "backoff-initial", d->backoff_initial_ms);
        dur(out, "backoff-max", d->backoff_max_ms);
        dur(out, "stable-after", d->stable_ms);
        dur(out, "reconnect-timeout", d->reconnect_timeout_ms);
        fprintf(out, "    max-devices %u\n}\n", d->max_devices);
    }
}
