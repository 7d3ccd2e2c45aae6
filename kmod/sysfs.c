// SPDX-License-Identifier: GPL-2.0-only
/*
 * /sys/kernel/xrayfdr/: statistics and TSC facts, one value per file, plus
 * "stats", every value in one read, and "users", what each user's sessions
 * hold (root only: it names other users).  All read-only; the names and
 * formats are an ABI (Documentation/ABI/testing/sysfs-kernel-xrayfdr), and
 * the runtime reads tsc_khz, constant_tsc, nonstop_tsc and tsc_reliable.
 */
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "xfdr.h"

enum xfdr_value {
	XFDR_V_ABI_VERSION,
	XFDR_V_SESSIONS,
	XFDR_V_SESSIONS_RETAINED,
	XFDR_V_SWITCH_RECORDS,
	XFDR_V_MIGRATION_RECORDS,
	XFDR_V_RECORDS_LOST,
	XFDR_V_BYTES_ALLOCATED,
	XFDR_V_BYTES_MAPPED,
	XFDR_V_TSC_KHZ,
	XFDR_V_CONSTANT_TSC,
	XFDR_V_NONSTOP_TSC,
	XFDR_V_TSC_RELIABLE,
	XFDR_V_TSC_CLOCKSOURCE,
	XFDR_V_TSC_KNOWN_FREQ,
	XFDR_V_RETAINED_EXPIRED, /* (new values go last: "stats" keeps its order) */
	XFDR_V_COUNT
};

static const char *const xfdr_value_names[XFDR_V_COUNT] = {
	[XFDR_V_ABI_VERSION] = "abi_version",
	[XFDR_V_SESSIONS] = "sessions",
	[XFDR_V_SESSIONS_RETAINED] = "sessions_retained",
	[XFDR_V_SWITCH_RECORDS] = "switch_records",
	[XFDR_V_MIGRATION_RECORDS] = "migration_records",
	[XFDR_V_RECORDS_LOST] = "records_lost",
	[XFDR_V_BYTES_ALLOCATED] = "bytes_allocated",
	[XFDR_V_BYTES_MAPPED] = "bytes_mapped",
	[XFDR_V_TSC_KHZ] = "tsc_khz",
	[XFDR_V_CONSTANT_TSC] = "constant_tsc",
	[XFDR_V_NONSTOP_TSC] = "nonstop_tsc",
	[XFDR_V_TSC_RELIABLE] = "tsc_reliable",
	[XFDR_V_TSC_CLOCKSOURCE] = "tsc_clocksource",
	[XFDR_V_TSC_KNOWN_FREQ] = "tsc_known_freq",
	[XFDR_V_RETAINED_EXPIRED] = "retained_expired",
};

/* Every value at one moment. */
static void xfdr_values(u64 *v)
{
	struct xfdr_counts counts;
	u32 tsc = xfdr_tsc_flags();

	xfdr_stats_counts(&counts);
	v[XFDR_V_ABI_VERSION] = XRAY_FDR_ABI_VERSION;
	mutex_lock(&xfdr_lock);
	v[XFDR_V_SESSIONS] = xfdr_totals.sessions;
	v[XFDR_V_SESSIONS_RETAINED] = xfdr_totals.retained;
	v[XFDR_V_RETAINED_EXPIRED] = xfdr_totals.retained_expired;
	v[XFDR_V_BYTES_ALLOCATED] = xfdr_totals.bytes_allocated;
	mutex_unlock(&xfdr_lock);
	v[XFDR_V_SWITCH_RECORDS] = counts.switch_records;
	v[XFDR_V_MIGRATION_RECORDS] = counts.migration_records;
	v[XFDR_V_RECORDS_LOST] = counts.records_lost;
	v[XFDR_V_BYTES_MAPPED] = counts.bytes_mapped;
	v[XFDR_V_TSC_KHZ] = xfdr_tsc_khz();
	v[XFDR_V_CONSTANT_TSC] = !!(tsc & XRAY_FDR_TSC_CONSTANT);
	v[XFDR_V_NONSTOP_TSC] = !!(tsc & XRAY_FDR_TSC_NONSTOP);
	v[XFDR_V_TSC_RELIABLE] = !!(tsc & XRAY_FDR_TSC_RELIABLE);
	v[XFDR_V_TSC_CLOCKSOURCE] = !!(tsc & XRAY_FDR_TSC_CLOCKSOURCE);
	v[XFDR_V_TSC_KNOWN_FREQ] = !!(tsc & XRAY_FDR_TSC_KNOWN_FREQ);
}

static ssize_t xfdr_value_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	u64 v[XFDR_V_COUNT];
	int i;

	for (i = 0; i < XFDR_V_COUNT; i++) {
		if (!strcmp(attr->attr.name, xfdr_value_names[i]))
			break;
	}
	if (i == XFDR_V_COUNT)
		return -EINVAL;
	xfdr_values(v);
	return sysfs_emit(buf, "%llu\n", v[i]);
}

static ssize_t stats_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	u64 v[XFDR_V_COUNT];
	int i, len = 0;

	xfdr_values(v);
	for (i = 0; i < XFDR_V_COUNT; i++)
		len += sysfs_emit_at(buf, len, "%s %llu\n", xfdr_value_names[i],
				     v[i]);
	return len;
}

/* One line per user with sessions: uid, sessions, retained, bytes. */
static ssize_t users_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct xfdr_user *u;
	int len = 0;

	mutex_lock(&xfdr_lock);
	list_for_each_entry(u, &xfdr_users, node) {
		len += sysfs_emit_at(buf, len, "%u %u %u %llu\n",
				     from_kuid(&init_user_ns, u->uid),
				     u->sessions, u->kept, u->bytes);
	}
	mutex_unlock(&xfdr_lock);
	return len;
}

#define XFDR_VALUE_ATTR(_name)                           \
	static struct kobj_attribute xfdr_attr_##_name = \
		__ATTR(_name, 0444, xfdr_value_show, NULL)

XFDR_VALUE_ATTR(abi_version);
XFDR_VALUE_ATTR(sessions);
XFDR_VALUE_ATTR(sessions_retained);
XFDR_VALUE_ATTR(retained_expired);
XFDR_VALUE_ATTR(switch_records);
XFDR_VALUE_ATTR(migration_records);
XFDR_VALUE_ATTR(records_lost);
XFDR_VALUE_ATTR(bytes_allocated);
XFDR_VALUE_ATTR(bytes_mapped);
XFDR_VALUE_ATTR(tsc_khz);
XFDR_VALUE_ATTR(constant_tsc);
XFDR_VALUE_ATTR(nonstop_tsc);
XFDR_VALUE_ATTR(tsc_reliable);
XFDR_VALUE_ATTR(tsc_clocksource);
XFDR_VALUE_ATTR(tsc_known_freq);
static struct kobj_attribute xfdr_attr_stats = __ATTR_RO(stats);
static struct kobj_attribute xfdr_attr_users = __ATTR_RO_MODE(users, 0400);

static struct attribute *xfdr_attrs[] = {
	&xfdr_attr_stats.attr,
	&xfdr_attr_abi_version.attr,
	&xfdr_attr_sessions.attr,
	&xfdr_attr_sessions_retained.attr,
	&xfdr_attr_retained_expired.attr,
	&xfdr_attr_switch_records.attr,
	&xfdr_attr_migration_records.attr,
	&xfdr_attr_records_lost.attr,
	&xfdr_attr_bytes_allocated.attr,
	&xfdr_attr_bytes_mapped.attr,
	&xfdr_attr_tsc_khz.attr,
	&xfdr_attr_constant_tsc.attr,
	&xfdr_attr_nonstop_tsc.attr,
	&xfdr_attr_tsc_reliable.attr,
	&xfdr_attr_tsc_clocksource.attr,
	&xfdr_attr_tsc_known_freq.attr,
	&xfdr_attr_users.attr,
	NULL,
};

static const struct attribute_group xfdr_attr_group = {
	.attrs = xfdr_attrs,
};

static struct kobject *xfdr_kobj;

int xfdr_sysfs_init(void)
{
	int err;

	xfdr_kobj = kobject_create_and_add("xrayfdr", kernel_kobj);
	if (!xfdr_kobj)
		return -ENOMEM;
	err = sysfs_create_group(xfdr_kobj, &xfdr_attr_group);
	if (err) {
		kobject_put(xfdr_kobj);
		return err;
	}
	return 0;
}

void xfdr_sysfs_exit(void)
{
	sysfs_remove_group(xfdr_kobj, &xfdr_attr_group);
	kobject_put(xfdr_kobj);
}
