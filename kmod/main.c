// SPDX-License-Identifier: GPL-2.0-only
/*
 * xray_fdr.ko: per-CPU trace rings for programs traced with xrayfdr.
 *
 * This file holds the module's entry points and /dev/xrayfdr: open()
 * creates a session, ioctl() configures and drives it, mmap() maps its
 * header page and CPU areas.  Everything a mapping may cover is allocated
 * when the geometry is set and freed only with the session, which a
 * mapping keeps alive through its reference to the file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "xfdr.h"

struct xfdr_config xfdr_config = {
	.max_session_kb = 64 * 1024,
	.max_total_kb = 256 * 1024,
	.max_sessions = 64,
	.max_retained = 8,
	.max_subbuf_size = 1U << 20,
	.max_subbufs = 1024,
	.max_threads = 1024,
	.max_user_sessions = 16,
	.max_user_kb = 96 * 1024,
	.max_user_retained = 3,
	.admin_reserve_sessions = 4,
	.admin_reserve_kb = 32 * 1024,
	.admin_reserve_retained = 2,
	.retained_max_age = 7 * 24 * 3600,
	.sched_records = true,
};

/* Initial values; netlink config-set changes all but three later. */
module_param_named(max_session_kb, xfdr_config.max_session_kb, uint, 0444);
MODULE_PARM_DESC(max_session_kb, "Memory cap of one session in KiB (65536)");
module_param_named(max_total_kb, xfdr_config.max_total_kb, uint, 0444);
MODULE_PARM_DESC(max_total_kb, "Memory cap of all sessions in KiB (262144)");
module_param_named(max_sessions, xfdr_config.max_sessions, uint, 0444);
MODULE_PARM_DESC(max_sessions, "Most open plus retained sessions (64)");
module_param_named(max_retained, xfdr_config.max_retained, uint, 0444);
MODULE_PARM_DESC(max_retained, "Most sessions marked keep (8)");
module_param_named(max_subbuf_size, xfdr_config.max_subbuf_size, uint, 0444);
MODULE_PARM_DESC(max_subbuf_size, "Largest sub-buffer in bytes (1048576)");
module_param_named(max_subbufs, xfdr_config.max_subbufs, uint, 0444);
MODULE_PARM_DESC(max_subbufs, "Most sub-buffers per ring (1024)");
module_param_named(max_threads, xfdr_config.max_threads, uint, 0444);
MODULE_PARM_DESC(max_threads, "Threads a session tracks for migrations (1024)");
module_param_named(max_user_sessions, xfdr_config.max_user_sessions, uint,
		   0444);
MODULE_PARM_DESC(max_user_sessions,
		 "Most open plus retained sessions of one user (16)");
module_param_named(max_user_kb, xfdr_config.max_user_kb, uint, 0444);
MODULE_PARM_DESC(max_user_kb,
		 "Memory cap of one user's sessions in KiB (98304)");
module_param_named(max_user_retained, xfdr_config.max_user_retained, uint,
		   0444);
MODULE_PARM_DESC(max_user_retained,
		 "Most sessions of one user marked keep (3)");
module_param_named(admin_reserve_sessions, xfdr_config.admin_reserve_sessions,
		   uint, 0444);
MODULE_PARM_DESC(admin_reserve_sessions,
		 "Sessions of max_sessions only CAP_SYS_ADMIN may open (4)");
module_param_named(admin_reserve_kb, xfdr_config.admin_reserve_kb, uint, 0444);
MODULE_PARM_DESC(admin_reserve_kb,
		 "KiB of max_total_kb only CAP_SYS_ADMIN may use (32768)");
module_param_named(admin_reserve_retained, xfdr_config.admin_reserve_retained,
		   uint, 0444);
MODULE_PARM_DESC(admin_reserve_retained,
		 "Keep slots of max_retained only CAP_SYS_ADMIN may use (2)");
module_param_named(retained_max_age, xfdr_config.retained_max_age, uint, 0444);
MODULE_PARM_DESC(retained_max_age,
		 "Seconds a user's retained session stays; 0: ever (604800)");

/*
 * The mode of /dev/xrayfdr.  The default lets every user trace their own
 * processes, held to the per-user limits; an administrator restricts the
 * device with a smaller mode and a group (60-xrayfdr.rules gives the node
 * group xrayfdr and this mode).
 */
static unsigned int xfdr_dev_mode = 0666;

/**
 * xfdr_dev_mode_set() - parse the dev_mode parameter
 * @val: the value given, in octal
 * @kp: the parameter
 *
 * Only read and write bits: a device node has no use for execute, set-id
 * or sticky bits, so a value with one is a mistake worth refusing.  0 is
 * refused too: the misc core would create the node 0600 instead.
 *
 * Return: 0, or -EINVAL for a value that is not such a mode.
 */
static int xfdr_dev_mode_set(const char *val, const struct kernel_param *kp)
{
	unsigned int mode;
	int err;

	err = kstrtouint(val, 8, &mode);
	if (err)
		return -EINVAL;
	if (!mode || mode & ~0666U) {
		pr_err("dev_mode %04o: not 0, only read and write bits (0666)\n",
		       mode);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = mode;
	return 0;
}

/* In octal, as chmod takes it and udev's MODE key reads it. */
static int xfdr_dev_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%04o\n", *(unsigned int *)kp->arg);
}

static const struct kernel_param_ops xfdr_dev_mode_ops = {
	.set = xfdr_dev_mode_set,
	.get = xfdr_dev_mode_get,
};

module_param_cb(dev_mode, &xfdr_dev_mode_ops, &xfdr_dev_mode, 0444);
MODULE_PARM_DESC(dev_mode, "Mode of /dev/xrayfdr, octal, bits of 0666 (0666)");

atomic64_t xfdr_bytes_mapped = ATOMIC64_INIT(0);

/**
 * struct xfdr_file - one open file of /dev/xrayfdr
 * @own: the session open() created; released with the file
 * @view: a retained session attached read-only, or NULL
 *
 * @own stays until release even after an attach, so a concurrent ioctl or
 * mmap that still looks at it never sees it freed.
 */
struct xfdr_file {
	struct xfdr_session *own;
	struct xfdr_session *view;
};

static struct xfdr_session *xfdr_file_session(struct xfdr_file *f,
					      bool *readonly)
{
	/* pairs with the release in xfdr_ioctl_attach(): a view is whole */
	struct xfdr_session *view = smp_load_acquire(&f->view);

	*readonly = view;
	return view ?: f->own;
}

static int xfdr_open(struct inode *inode, struct file *file)
{
	struct xfdr_file *f;
	struct xfdr_session *s;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	s = xfdr_session_create(file->f_mode & FMODE_WRITE);
	if (IS_ERR(s)) {
		kfree(f);
		return PTR_ERR(s);
	}
	f->own = s;
	file->private_data = f;
	return stream_open(inode, file);
}

static int xfdr_release(struct inode *inode, struct file *file)
{
	struct xfdr_file *f = file->private_data;

	if (f->view)
		xfdr_session_put(f->view);
	xfdr_session_owner_gone(f->own);
	kfree(f);
	return 0;
}

/*
 * The size a size-first struct in user space gives itself: shorter than
 * its first version is EINVAL, longer than a page E2BIG.
 */
static int xfdr_user_size(const void __user *src, size_t ver0, u32 *usize)
{
	if (get_user(*usize, (const u32 __user *)src))
		return -EFAULT;
	if (*usize < ver0)
		return -EINVAL;
	if (*usize > PAGE_SIZE)
		return -E2BIG;
	return 0;
}

/*
 * Copy a size-first struct from user space (xfdr_user_size()); unknown
 * trailing bytes must be zero (copy_struct_from_user() returns E2BIG
 * otherwise).
 */
static int xfdr_copy_struct(void *dst, size_t ksize, size_t ver0,
			    const void __user *src)
{
	u32 usize;
	int err = xfdr_user_size(src, ver0, &usize);

	if (err)
		return err;
	return copy_struct_from_user(dst, ksize, src, usize);
}

static int xfdr_ioctl_info(struct xfdr_session *s, bool readonly,
			   void __user *uarg)
{
	struct xray_fdr_info info = {};
	u32 usize;
	int err = xfdr_user_size(uarg, XRAY_FDR_INFO_SIZE_VER0, &usize);

	if (err)
		return err;

	info.size = min_t(u32, usize, sizeof(info));
	info.abi_version = XRAY_FDR_ABI_VERSION;
	info.session_id = s->id;
	info.nr_cpus = nr_cpu_ids;
	info.page_size = PAGE_SIZE;
	info.header_size = sizeof(struct xray_fdr_header);
	info.control_size = PAGE_SIZE;
	info.subbuf_header_size = sizeof(struct xray_fdr_subbuf);
	info.min_subbuf_size = XRAY_FDR_SUBBUF_MIN_SIZE;
	mutex_lock(&xfdr_lock);
	info.max_subbuf_size = xfdr_config.max_subbuf_size;
	info.max_subbufs = xfdr_config.max_subbufs;
	info.max_session_bytes = (u64)xfdr_config.max_session_kb * 1024;
	info.state = s->state | (readonly ? XRAY_FDR_STATE_READONLY : 0);
	mutex_unlock(&xfdr_lock);

	if (copy_to_user(uarg, &info, info.size))
		return -EFAULT;
	return 0;
}

static int xfdr_ioctl_attach(struct xfdr_file *f, void __user *uarg)
{
	struct xray_fdr_attach req;
	struct xfdr_session *target;
	int err;

	err = xfdr_copy_struct(&req, sizeof(req), XRAY_FDR_ATTACH_SIZE_VER0,
			       uarg);
	if (err)
		return err;

	target = xfdr_session_find(req.session_id);
	if (!target)
		return -ENOENT;
	if (!xfdr_session_may_control(target, NULL)) {
		err = -EPERM;
		goto err_put;
	}
	err = xfdr_session_attach(target);
	if (err)
		goto err_put;

	mutex_lock(&xfdr_lock);
	if (f->view || (f->own->state & XRAY_FDR_STATE_CONFIGURED)) {
		mutex_unlock(&xfdr_lock);
		err = -EBUSY;
		goto err_put;
	}
	/* pairs with the acquire in xfdr_file_session() */
	smp_store_release(&f->view, target);
	mutex_unlock(&xfdr_lock);
	return 0;

err_put:
	xfdr_session_put(target);
	return err;
}

/* Commands are matched without their size bits: see the uapi header. */
#define XFDR_IOC_BASE(cmd) ((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long xfdr_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct xfdr_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct xray_fdr_geometry geom;
	struct xfdr_session *s;
	bool readonly;
	int err;

	if (_IOC_TYPE(cmd) != XRAY_FDR_IOC_MAGIC)
		return -ENOTTY;
	s = xfdr_file_session(f, &readonly);

	switch (XFDR_IOC_BASE(cmd)) {
	case XFDR_IOC_BASE(XRAY_FDR_IOC_INFO):
		return xfdr_ioctl_info(s, readonly, uarg);
	case XFDR_IOC_BASE(XRAY_FDR_IOC_ATTACH):
		return xfdr_ioctl_attach(f, uarg);
	case XFDR_IOC_BASE(XRAY_FDR_IOC_SET_GEOMETRY):
	case XFDR_IOC_BASE(XRAY_FDR_IOC_START):
	case XFDR_IOC_BASE(XRAY_FDR_IOC_STOP):
	case XFDR_IOC_BASE(XRAY_FDR_IOC_FREEZE):
	case XFDR_IOC_BASE(XRAY_FDR_IOC_KEEP):
		break;
	default:
		return -ENOTTY;
	}

	/* The rest change the session: not through a read-only view... */
	if (readonly)
		return -EPERM;
	/* ...nor through a file opened read-only */
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	switch (XFDR_IOC_BASE(cmd)) {
	case XFDR_IOC_BASE(XRAY_FDR_IOC_SET_GEOMETRY):
		err = xfdr_copy_struct(&geom, sizeof(geom),
				       XRAY_FDR_GEOMETRY_SIZE_VER0, uarg);
		return err ?: xfdr_session_configure(s, &geom);
	case XFDR_IOC_BASE(XRAY_FDR_IOC_START):
		return xfdr_session_start(s);
	case XFDR_IOC_BASE(XRAY_FDR_IOC_STOP):
		return xfdr_session_stop(s);
	case XFDR_IOC_BASE(XRAY_FDR_IOC_FREEZE):
		return xfdr_session_freeze(s);
	default: /* XRAY_FDR_IOC_KEEP */
		if (arg > 1)
			return -EINVAL;
		return xfdr_session_keep(s, arg);
	}
}

static void xfdr_vm_open(struct vm_area_struct *vma)
{
	atomic64_add(vma->vm_end - vma->vm_start, &xfdr_bytes_mapped);
}

static void xfdr_vm_close(struct vm_area_struct *vma)
{
	atomic64_sub(vma->vm_end - vma->vm_start, &xfdr_bytes_mapped);
}

/* Partial unmaps would make a mapping's size (and the statistics) lie. */
static int xfdr_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static const struct vm_operations_struct xfdr_vm_ops = {
	.open = xfdr_vm_open,
	.close = xfdr_vm_close,
	.may_split = xfdr_vm_may_split,
};

static int xfdr_insert_pages(struct vm_area_struct *vma, unsigned long uaddr,
			     void *kaddr, size_t size)
{
	size_t done;
	int err;

	for (done = 0; done < size; done += PAGE_SIZE) {
		err = vm_insert_page(vma, uaddr + done,
				     vmalloc_to_page(kaddr + done));
		if (err)
			return err;
	}
	return 0;
}

/*
 * Accept exactly the documented mappings: the header page alone at offset
 * 0, read-only; or a run of whole CPU areas from their own offsets.
 */
static int xfdr_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct xfdr_file *f = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long area_pages, first, count, cpu, uaddr;
	struct xfdr_session *s;
	bool readonly;
	int err;

	/* VM_MAYSHARE: a read-only file's shared mappings lack VM_SHARED */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	s = xfdr_file_session(f, &readonly);
	mutex_lock(&xfdr_lock);
	err = (s->state & XRAY_FDR_STATE_CONFIGURED) ? 0 : -EINVAL;
	mutex_unlock(&xfdr_lock);
	if (err)
		return err;

	if (vma->vm_pgoff == 0) {
		if (len != PAGE_SIZE)
			return -EINVAL;
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		readonly = true;
		first = 0;
		count = 0;
	} else {
		area_pages = s->area_size >> PAGE_SHIFT;
		first = vma->vm_pgoff - 1;
		if (first % area_pages || len % s->area_size)
			return -EINVAL;
		first /= area_pages;
		count = len / s->area_size;
		if (first >= nr_cpu_ids || count > nr_cpu_ids - first)
			return -EINVAL;
		if (readonly && (vma->vm_flags & VM_WRITE))
			return -EACCES;
	}

	xfdr_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP,
			  VM_MAYEXEC | (readonly ? VM_MAYWRITE : 0));
	if (!count) {
		err = xfdr_insert_pages(vma, vma->vm_start, s->header,
					PAGE_SIZE);
	} else {
		uaddr = vma->vm_start;
		for (cpu = first, err = 0; cpu < first + count && !err; cpu++) {
			err = xfdr_insert_pages(vma, uaddr, s->cpus[cpu].area,
						s->area_size);
			uaddr += s->area_size;
		}
	}
	if (err)
		return err;

	vma->vm_ops = &xfdr_vm_ops;
	xfdr_vm_open(vma);
	return 0;
}

static const struct file_operations xfdr_fops = {
	.owner = THIS_MODULE,
	.open = xfdr_open,
	.release = xfdr_release,
	.unlocked_ioctl = xfdr_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = xfdr_mmap,
	.llseek = XFDR_NO_LLSEEK,
};

/* .mode: dev_mode, set when the module loads */
static struct miscdevice xfdr_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = XRAY_FDR_DEVICE_NAME,
	.fops = &xfdr_fops,
};

static int __init xfdr_check_params(void)
{
	struct xfdr_config *c = &xfdr_config;

	if (!is_power_of_2(c->max_subbuf_size) ||
	    c->max_subbuf_size < XRAY_FDR_SUBBUF_MIN_SIZE ||
	    c->max_subbuf_size > XFDR_RING_MAX_BYTES / 2) {
		pr_err("max_subbuf_size must be a power of two from %u to %u\n",
		       XRAY_FDR_SUBBUF_MIN_SIZE, XFDR_RING_MAX_BYTES / 2);
		return -EINVAL;
	}
	if (c->max_subbufs < 2 || c->max_subbufs > 65536) {
		pr_err("max_subbufs must be from 2 to 65536\n");
		return -EINVAL;
	}
	if (c->max_threads < 16 || c->max_threads > 65536) {
		pr_err("max_threads must be from 16 to 65536\n");
		return -EINVAL;
	}
	if (!c->max_sessions || c->max_session_kb < 64 ||
	    c->max_total_kb < 64) {
		pr_err("max_sessions, max_session_kb and max_total_kb are too small\n");
		return -EINVAL;
	}
	return 0;
}

static int __init xfdr_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct xray_fdr_info) != XRAY_FDR_INFO_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct xray_fdr_geometry) !=
		     XRAY_FDR_GEOMETRY_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct xray_fdr_attach) !=
		     XRAY_FDR_ATTACH_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct xray_fdr_header) > PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct xray_fdr_control) > PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct xray_fdr_subbuf) % 8);
	BUILD_BUG_ON(sizeof(struct xray_fdr_sched_record) != 24);

	err = xfdr_check_params();
	if (err)
		return err;
	err = xfdr_sched_init();
	if (err)
		return err;
	err = xfdr_sysfs_init();
	if (err)
		return err;
	err = xfdr_netlink_init();
	if (err)
		goto err_sysfs;
	xfdr_misc.mode = xfdr_dev_mode;
	err = misc_register(&xfdr_misc);
	if (err)
		goto err_netlink;
	pr_info("ready: /dev/%s (mode %04o), ABI %u, %u CPU areas\n",
		XRAY_FDR_DEVICE_NAME, xfdr_dev_mode, XRAY_FDR_ABI_VERSION,
		nr_cpu_ids);
	return 0;

err_netlink:
	xfdr_netlink_exit();
err_sysfs:
	xfdr_sysfs_exit();
	return err;
}

static void __exit xfdr_exit(void)
{
	misc_deregister(&xfdr_misc);
	xfdr_netlink_exit();
	xfdr_sysfs_exit();
	/* No file can be open (each holds a module reference): only retained
	 * sessions are left.
	 */
	xfdr_sessions_drop_all();
	xfdr_sched_exit();
}

module_init(xfdr_init);
module_exit(xfdr_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("XRay flight data recorder rings for xrayfdr");
MODULE_AUTHOR("The xrayfdr authors");
