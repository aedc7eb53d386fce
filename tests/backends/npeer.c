/* npeer - the far end of a vif for the netback tests: runs in a network
 * namespace on the driver domain's bridge (or behind a veth on it) and
 * sends or checks the frames the test frontend (netfront) receives or sent.
 * Frames and payloads are nframe.c's, so both ends check every byte.
 *
 *   npeer recv-udp PORT COUNT SECS          COUNT datagrams to PORT, payloads checked
 *                                           (an IPv6 socket: IPv4 and IPv6 both)
 *   npeer send-udp IP PORT SIZE COUNT       COUNT datagrams of SIZE payload bytes (seq 0..)
 *                                           to an IPv4 or IPv6 address,
 *                                           a new source port every 8
 *   npeer recv-tcp IFACE PORT BYTES SECS    TCP stream bytes [0, BYTES) to PORT seen on
 *                                           IFACE (AF_PACKET), however segmented; checksums
 *                                           checked unless the kernel left them partial
 *   npeer send-raw IFACE DSTMAC PORT COUNT  COUNT UDP frames to DSTMAC (any: multicast,
 *                                           another host's) from IFACE's own MAC
 *   npeer send-gso IFACE DSTMAC IP PORT SIZE MSS
 *                                           one TCP frame of SIZE stream bytes from seq 1000
 *                                           with a virtio_net_hdr asking for TSO (mss MSS)
 *
 * One line of output, "ok: ..." or "FAIL: ..." (exit 1). Every wait is bounded.
 */
#define _GNU_SOURCE
#include "nframe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FAILF(...)                                                                                 \
    do {                                                                                           \
        printf("FAIL: " __VA_ARGS__);                                                              \
        printf("\n");                                                                              \
        exit(1);                                                                                   \
    } while (0)

static uint8_t buf[65536 + 256];

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t num(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || errno)
        FAILF("'%s' is not a number", s);
    return v;
}

/* Wait for fd to be readable until end; false on timeout. */
static bool readable(int fd, uint64_t end)
{
    uint64_t now = now_ms();
    if (now >= end)
        return false;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, (int)(end - now)) > 0;
}

static void recv_udp(unsigned port, unsigned count, unsigned secs)
{
    /* Dual-stack: IPv4 datagrams arrive as v4-mapped addresses. */
    int s = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    int off = 0;
    setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    int big = 4 << 20;
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
        FAILF("binding UDP port %u: %s", port, strerror(errno));
    /* Ready: the caller may start sending once this line is out. */
    printf("# listening on UDP port %u\n", port);
    fflush(stdout);
    uint64_t end = now_ms() + secs * 1000ull;
    unsigned got = 0, maxlen = 0;
    while (got < count) {
        if (!readable(s, end))
            FAILF("recv-udp: %u of %u datagrams to port %u in %u s", got, count, port, secs);
        ssize_t n = recv(s, buf, sizeof(buf), 0);
        if (n < 0)
            FAILF("recv: %s", strerror(errno));
        uint32_t seq;
        if (!nfr_payload_ok(buf, (size_t)n, &seq))
            FAILF("recv-udp: datagram %u (%zd bytes) has the wrong payload", got, n);
        if ((unsigned)n > maxlen)
            maxlen = (unsigned)n;
        got++;
    }
    printf("ok: received %u UDP datagrams to port %u (largest %u bytes)\n", got, port, maxlen);
}

static void send_udp(const char *ip, unsigned port, unsigned size, unsigned count)
{
    struct sockaddr_storage a;
    memset(&a, 0, sizeof(a));
    struct sockaddr_in *a4 = (struct sockaddr_in *)&a;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;
    socklen_t alen;
    int family;
    if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
        a4->sin_family = family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        alen = sizeof(*a4);
    } else if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
        a6->sin6_family = family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        alen = sizeof(*a6);
    } else {
        FAILF("send-udp: bad address %s", ip);
    }
    int s = socket(family, SOCK_DGRAM, 0);
    if (s < 0)
        FAILF("socket: %s", strerror(errno));
    if (size < NFR_PAYMIN || size > 65000)
        FAILF("send-udp: %u bytes: %u..65000", size, NFR_PAYMIN);
    for (unsigned i = 0; i < count; i++) {
        if (i && i % 8 == 0) { /* a new source port: a new flow, perhaps another queue */
            close(s);
            s = socket(family, SOCK_DGRAM, 0);
            if (s < 0)
                FAILF("socket: %s", strerror(errno));
        }
        nfr_payload(buf, size, i);
        if (sendto(s, buf, size, 0, (struct sockaddr *)&a, alen) != (ssize_t)size)
            FAILF("sendto %s:%u: %s", ip, port, strerror(errno));
        if (i % 32 == 31) { /* do not overrun the guest's few rx buffers */
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    printf("ok: sent %u UDP datagrams of %u bytes to %s:%u\n", count, size, ip, port);
}

static int packet_socket(const char *ifname, int *ifindex, uint8_t mac[6])
{
    int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (s < 0)
        FAILF("AF_PACKET socket: %s", strerror(errno));
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0)
        FAILF("%s: %s", ifname, strerror(errno));
    *ifindex = ifr.ifr_ifindex;
    if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
        FAILF("%s: hardware address: %s", ifname, strerror(errno));
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    struct sockaddr_ll ll = {
        .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = *ifindex};
    if (bind(s, (struct sockaddr *)&ll, sizeof(ll)) < 0)
        FAILF("binding to %s: %s", ifname, strerror(errno));
    return s;
}

static void recv_tcp(const char *ifname, unsigned port, uint64_t bytes, unsigned secs)
{
    int ifindex;
    uint8_t mac[6];
    int s = packet_socket(ifname, &ifindex, mac);
    int on = 1;
    setsockopt(s, SOL_PACKET, PACKET_AUXDATA, &on, sizeof(on));
    /* Each frame comes after a virtio_net_hdr: a GSO frame shows its segment size. */
    if (setsockopt(s, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof(on)) < 0)
        FAILF("PACKET_VNET_HDR: %s", strerror(errno));
    uint8_t *seen = calloc(bytes ? bytes : 1, 1);
    if (!seen)
        FAILF("out of memory");
    printf("# capturing on %s\n", ifname);
    fflush(stdout);
    uint64_t end = now_ms() + secs * 1000ull, have = 0;
    unsigned frames = 0, partial = 0, maxlen = 0, gso = 0, mss = 0;
    while (have < bytes) {
        if (!readable(s, end))
            FAILF("recv-tcp: %llu of %llu stream bytes in %u s", (unsigned long long)have,
                  (unsigned long long)bytes, secs);
        char cbuf[256];
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct sockaddr_ll from;
        m.msg_name = &from;
        m.msg_namelen = sizeof(from);
        ssize_t n = recvmsg(s, &m, MSG_TRUNC);
        if (n < 0)
            FAILF("recvmsg: %s", strerror(errno));
        if (from.sll_pkttype == PACKET_OUTGOING)
            continue;
        if ((size_t)n > sizeof(buf) || (size_t)n < sizeof(struct virtio_net_hdr))
            FAILF("recv-tcp: a frame of %zd bytes", n);
        struct virtio_net_hdr h;
        memcpy(&h, buf, sizeof(h));
        n -= (ssize_t)sizeof(h);
        memmove(buf, buf + sizeof(h), (size_t)n);
        bool csum_partial = false;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA) {
                struct tpacket_auxdata aux;
                memcpy(&aux, CMSG_DATA(c), sizeof(aux));
                csum_partial = aux.tp_status & TP_STATUS_CSUMNOTREADY;
            }
        }
        struct nfr_info in;
        if (nfr_parse(buf, (size_t)n, &in) < 0 || in.proto != 6 || in.dport != port)
            continue;
        if (!in.ip_ok)
            FAILF("recv-tcp: a frame with a bad IPv4 header");
        if (!csum_partial && !in.l4_csum_ok)
            FAILF("recv-tcp: a frame with a bad TCP checksum (seq %u)", (unsigned)in.tcpseq);
        frames++;
        partial += csum_partial;
        if (h.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
            gso++;
            mss = h.gso_size;
        }
        if ((unsigned)n > maxlen)
            maxlen = (unsigned)n;
        for (size_t i = 0; i < in.paylen; i++) {
            uint64_t off = (uint64_t)(uint32_t)(in.tcpseq - 1000u) + i;
            if (off >= bytes || in.payload[i] != nfr_stream_byte(in.tcpseq + i))
                FAILF("recv-tcp: wrong stream byte at seq %u", (unsigned)(in.tcpseq + i));
            have += !seen[off];
            seen[off] = 1;
        }
    }
    free(seen);
    printf("ok: received %llu TCP stream bytes in %u frames on %s (largest %u, %u with partial "
           "checksums, %u GSO with mss %u)\n",
           (unsigned long long)bytes, frames, ifname, maxlen, partial, gso, mss);
}

static void send_raw(const char *ifname, const char *dmac, unsigned port, unsigned count)
{
    int ifindex;
    struct nfr_end src = {.ip = {10, 99, 0, 1}, .port = 5000};
    struct nfr_end dst = {.ip = {10, 99, 0, 2}, .port = (uint16_t)port};
    int s = packet_socket(ifname, &ifindex, src.mac);
    if (nfr_parse_mac(dmac, dst.mac) < 0)
        FAILF("'%s' is not a MAC address", dmac);
    for (unsigned i = 0; i < count; i++) {
        size_t len = nfr_udp(buf, sizeof(buf), &src, &dst, i, 200, false);
        if (send(s, buf, len, 0) != (ssize_t)len)
            FAILF("sending on %s: %s", ifname, strerror(errno));
    }
    printf("ok: sent %u frames to %s on %s\n", count, dmac, ifname);
}

static void send_gso(const char *ifname, const char *dmac, const char *ip, unsigned port,
                     unsigned size, unsigned mss)
{
    int ifindex;
    struct nfr_end src = {.ip = {10, 99, 0, 1}, .port = 5001};
    struct nfr_end dst = {.port = (uint16_t)port};
    int s = packet_socket(ifname, &ifindex, src.mac);
    if (nfr_parse_mac(dmac, dst.mac) < 0 || nfr_parse_ip(ip, dst.ip) < 0)
        FAILF("send-gso: bad MAC %s or IP %s", dmac, ip);
    int on = 1;
    if (setsockopt(s, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof(on)) < 0)
        FAILF("PACKET_VNET_HDR: %s", strerror(errno));
    struct virtio_net_hdr h;
    memset(&h, 0, sizeof(h));
    size_t len = nfr_tcp(buf + sizeof(h), sizeof(buf) - sizeof(h), &src, &dst, 1000, size);
    if (!len)
        FAILF("send-gso: %u bytes do not fit a frame", size);
    h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    h.csum_start = NFR_ETH + NFR_IP;
    h.csum_offset = 16;
    if (size > mss) {
        h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
        h.gso_size = (uint16_t)mss;
        h.hdr_len = NFR_ETH + NFR_IP + NFR_TCP;
    }
    memcpy(buf, &h, sizeof(h));
    if (send(s, buf, sizeof(h) + len, 0) != (ssize_t)(sizeof(h) + len))
        FAILF("sending a %zu-byte GSO frame on %s: %s", len, ifname, strerror(errno));
    printf("ok: sent a TCP frame of %u stream bytes (mss %u) to %s on %s\n", size, mss, dmac,
           ifname);
}

static void need(int argc, int n)
{
    if (argc < n + 2)
        FAILF("%s needs %d arguments", n ? "this command" : "a command", n);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    need(argc, 0);
    const char *c = argv[1];
    if (!strcmp(c, "recv-udp")) {
        need(argc, 3);
        recv_udp((unsigned)num(argv[2]), (unsigned)num(argv[3]), (unsigned)num(argv[4]));
    } else if (!strcmp(c, "send-udp")) {
        need(argc, 4);
        send_udp(argv[2], (unsigned)num(argv[3]), (unsigned)num(argv[4]), (unsigned)num(argv[5]));
    } else if (!strcmp(c, "recv-tcp")) {
        need(argc, 4);
        recv_tcp(argv[2], (unsigned)num(argv[3]), num(argv[4]), (unsigned)num(argv[5]));
    } else if (!strcmp(c, "send-raw")) {
        need(argc, 4);
        send_raw(argv[2], argv[3], (unsigned)num(argv[4]), (unsigned)num(argv[5]));
    } else if (!strcmp(c, "send-gso")) {
        need(argc, 6);
        send_gso(argv[2], argv[3], argv[4], (unsigned)num(argv[5]), (unsigned)num(argv[6]),
                 (unsigned)num(argv[7]));
    } else {
        FAILF("unknown command '%s'", c);
    }
    return 0;
}
