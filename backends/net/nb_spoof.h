/* nb_spoof.h - what Xen's vif-bridge antispoof rules do (ebtables and
 * iptables in the hotplug scripts; this backend runs none): a frame from the
 * guest leaves the driver domain only with the guest's own source MAC (the
 * backend dir's "mac"), and, when the toolstack gave the vif addresses (the
 * "ip" key, space-separated IPv4), an IPv4 source or ARP sender among them,
 * with ARP's sender MAC the guest's too. IPv6 is not filtered by address, as
 * vif-bridge does not. A VLAN tag is looked through. Pure: no I/O. */
#ifndef NB_SPOOF_H
#define NB_SPOOF_H

#include <stddef.h>
#include <stdint.h>

#define NB_SPOOF_MAX_IPS 16u

struct nb_spoof {
    uint8_t mac[6];
    unsigned nip;                  /* 0: any address */
    uint32_t ip[NB_SPOOF_MAX_IPS]; /* network order */
};

/* The "ip" key's value into s. 0, or -1 (why names what is wrong). */
int nb_spoof_parse_ips(const char *v, struct nb_spoof *s, const char **why);
/* NULL if the frame may go, else why not. */
const char *nb_spoof_check(const struct nb_spoof *s, const uint8_t *frame, size_t len);

#endif
