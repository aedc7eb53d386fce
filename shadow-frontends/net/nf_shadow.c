/* nf_shadow.c - the recorded interface configuration (see nf_shadow.h). */
#define _GNU_SOURCE
#include "nf_shadow.h"

#include "hex.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read a small text file whole; NUL-terminated. -1 (errno) on failure. */
static ssize_t read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

static int read_sys_ulong(const char *ifname, const char *attr, int base, unsigned long *out)
{
    char path[96], buf[64];
    snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, attr);
    if (read_text(path, buf, sizeof(buf)) < 0)
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(buf, &end, base);
    if (errno || end == buf || (*end && *end != '\n')) {
        errno = EINVAL;
        return -1;
    }
    *out = v;
    return 0;
}

/* One line: "<ifindex> <name> <users> <global> <12 hex digits>". */
static int parse_line(const char *line, const char *ifname, uint8_t addr[6], bool *mine)
{
    char name[IFNAMSIZ + 1], hex[64];
    int idx;
    unsigned users, global;
    *mine = false;
    if (sscanf(line, "%d %16s %u %u %63s", &idx, name, &users, &global, hex) != 5)
        return -1;
    if (strcmp(name, ifname))
        return 0;
    *mine = true;
    if (strlen(hex) != 12)
        return 1; /* not an Ethernet address: nothing a netif backend filters */
    for (unsigned i = 0; i < 6; i++) {
        int h = hex_digit(hex[2 * i]), l = hex_digit(hex[2 * i + 1]);
        if (h < 0 || l < 0)
            return -1;
        addr[i] = (uint8_t)(h << 4 | l);
    }
    return 2;
}

int nf_shadow_parse_mcast(const char *text, const char *ifname, struct nf_shadow *s)
{
    s->nmc = 0;
    s->mc_overflow = false;
    int lines = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[256];
        if (n < sizeof(line)) {
            memcpy(line, p, n);
            line[n] = '\0';
            uint8_t a[6];
            bool mine;
            int r = parse_line(line, ifname, a, &mine);
            if (r < 0 && mine) {
                errno = EINVAL;
                return -1;
            }
            if (mine)
                lines++;
            if (r == 2 && !nf_shadow_has(s, a)) {
                if (s->nmc < NF_MCAST_MAX)
                    memcpy(s->mc[s->nmc++], a, 6);
                else
                    s->mc_overflow = true;
            }
        }
        p += n;
        if (*p == '\n')
            p++;
    }
    return lines;
}

int nf_shadow_read(const char *ifname, struct nf_shadow *s, char *text, size_t len)
{
    unsigned long mtu, flags;
    if (read_sys_ulong(ifname, "mtu", 10, &mtu) < 0 ||
        read_sys_ulong(ifname, "flags", 16, &flags) < 0)
        return -1;
    /* Past the buffer, the list counts as overflowed. */
    ssize_t n = read_text("/proc/net/dev_mcast", text, len);
    if (n < 0)
        return -1;
    struct nf_shadow t = {.mtu = (unsigned)mtu,
                          .up = flags & IFF_UP,
                          .promisc = flags & IFF_PROMISC,
                          .allmulti = flags & IFF_ALLMULTI};
    if (nf_shadow_parse_mcast(text, ifname, &t) < 0)
        return -1;
    if ((size_t)n + 1 >= len)
        t.mc_overflow = true;
    *s = t;
    return 0;
}

bool nf_shadow_has(const struct nf_shadow *s, const uint8_t a[6])
{
    for (unsigned i = 0; i < s->nmc; i++)
        if (!memcmp(s->mc[i], a, 6))
            return true;
    return false;
}

bool nf_shadow_accepts(const struct nf_shadow *s, const uint8_t mac[6], const uint8_t dst[6])
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (s->promisc || !memcmp(dst, mac, 6) || !memcmp(dst, bcast, 6))
        return true;
    if (!(dst[0] & 1))
        return false; /* unicast for another host */
    return s->allmulti || s->mc_overflow || nf_shadow_has(s, dst);
}

bool nf_shadow_wants_filter(const struct nf_shadow *s)
{
    return !s->promisc && !s->allmulti && !s->mc_overflow;
}

void nf_shadow_describe(const struct nf_shadow *s, char *buf, size_t len)
{
    snprintf(buf, len, "mtu=%u%s%s%s mc=%u%s", s->mtu, s->up ? " up" : " down",
             s->promisc ? " promisc" : "", s->allmulti ? " allmulti" : "", s->nmc,
             s->mc_overflow ? "+" : "");
}
