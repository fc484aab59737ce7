/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The ioctl PD allocation, IBPD_METHOD_PD_ALLOC, is one of ibpd's own
 * methods, in <rdma/ibpd_user_ioctl_cmds.h>; this header only keeps the
 * sources that included it building. Include that one instead.
 */

#ifndef IBPD_COMPAT_IOCTL_CMDS_H
#define IBPD_COMPAT_IOCTL_CMDS_H

#include <rdma/ibpd_user_ioctl_cmds.h>

#endif /* IBPD_COMPAT_IOCTL_CMDS_H */
