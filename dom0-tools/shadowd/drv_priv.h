/* drv_priv.h - shadowd's domain driver: the driver of one kind as
 * shadowd-priv runs it, reached through the channel (privchan.h). Its ops
 * are the drv.h interface, so recovery, standby and detection do not know
 * the driver is in another process; open, check and the poll hooks are
 * not used (the channel is in shadowd's loop itself). */
#ifndef SD_DRV_PRIV_H
#define SD_DRV_PRIV_H

#include "drv.h"

struct sd_privchan;

extern const struct sd_drv_ops sd_drv_priv;

/* The driver of kind k over ch (freed by sd_drv_priv.close). NULL: no memory. */
struct sd_drv *sd_drv_priv_new(struct sd_privchan *ch, enum sd_driver_kind k);

#endif
