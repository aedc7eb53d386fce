/* hex.h - the value of one hexadecimal digit, for the parsers of values a
 * peer or the kernel wrote in hex (a MAC address, a sysfs/procfs address).
 */
#ifndef UNDERSTUDY_HEX_H
#define UNDERSTUDY_HEX_H

/* 0-15 for '0'-'9', 'a'-'f', 'A'-'F'; -1 for anything else. */
int hex_digit(char c);

#endif
