#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The netlink family three ways must agree: its YAML spec
(Documentation/netlink/specs/xrayfdr.yaml), the uapi header's enums and
defines (include/uapi/linux/xray_fdr.h) and the kernel's policies
(kmod/netlink.c).  And the sysfs files the kernel creates (kmod/sysfs.c)
are the ones Documentation/ABI/testing/sysfs-kernel-xrayfdr describes.
Prints TAP: one result per check."""

import os
import re
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SPEC = os.path.join(ROOT, "Documentation/netlink/specs/xrayfdr.yaml")
HEADER = os.path.join(ROOT, "include/uapi/linux/xray_fdr.h")
KERNEL = os.path.join(ROOT, "kmod/netlink.c")
SYSFS = os.path.join(ROOT, "kmod/sysfs.c")
ABI = os.path.join(ROOT, "Documentation/ABI/testing/sysfs-kernel-xrayfdr")

results = []


def check(ok, desc, detail=""):
    results.append((ok, desc, detail))


def c_name(prefix, name):
    return (prefix + name).upper().replace("-", "_")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def header_enums(text):
    """Every enumerator of the header with its value."""
    values = {}
    for body in re.findall(r"enum\s*\w*\s*\{(.*?)\};", text, flags=re.S):
        nxt = 0
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            m = re.match(r"(\w+)\s*(?:=\s*(.+))?$", item, flags=re.S)
            if not m:
                continue
            name, expr = m.group(1), m.group(2)
            if expr is not None:
                expr = expr.strip()
                val = values.get(expr)
                if val is None:
                    inner = re.match(r"\(?\s*(\w+)\s*-\s*1\s*\)?$", expr)
                    val = values[inner.group(1)] - 1 if inner else int(expr, 0)
                nxt = val
            values[name] = nxt
            nxt += 1
    return values


def header_defines(text):
    defines = {}
    for name, val in re.findall(r"#define\s+(\w+)\s+(.+)", text):
        val = val.strip()
        m = re.match(r"\(1U << (\d+)\)$", val)
        if m:
            defines[name] = 1 << int(m.group(1))
        elif re.match(r"^(0x[0-9a-fA-F]+|\d+)$", val):
            defines[name] = int(val, 0)
        elif re.match(r'^".*"$', val):
            defines[name] = val.strip('"')
    return defines


def main():
    with open(SPEC) as f:
        spec = yaml.safe_load(f)
    with open(HEADER) as f:
        header = strip_comments(f.read())
    with open(KERNEL) as f:
        kernel = strip_comments(f.read())
    enums = header_enums(header)
    defines = header_defines(header)

    check(spec.get("name") == defines.get("XRAY_FDR_GENL_NAME"),
          "family name matches XRAY_FDR_GENL_NAME")
    check(spec.get("protocol") == "genetlink", "protocol is genetlink")

    for d in spec.get("definitions", []):
        if d["type"] == "const":
            want = defines.get(c_name("xray-fdr-", d["name"]))
            check(want == d["value"], "const %s = %s" % (d["name"], d["value"]),
                  "header has %r" % want)
        elif d["type"] == "flags":
            bad = [e for i, e in enumerate(d["entries"])
                   if defines.get(c_name(d["name-prefix"], e)) != 1 << i]
            check(not bad, "flags %s match the header's bits" % d["name"],
                  "mismatched: %s" % bad)
        elif d["type"] == "enum":
            bad = [e for i, e in enumerate(d["entries"])
                   if enums.get(c_name(d["name-prefix"], e)) != i]
            check(not bad, "enum %s matches the header" % d["name"],
                  "mismatched: %s" % bad)

    sets = {}
    for aset in spec["attribute-sets"]:
        prefix = aset["name-prefix"]
        attrs = {}
        bad = []
        nxt = 0
        for a in aset["attributes"]:
            val = a.get("value", nxt)
            nxt = val + 1
            name = c_name(prefix, a["name"])
            attrs[a["name"]] = (name, a)
            if enums.get(name) != val:
                bad.append("%s=%s (header %s)" % (name, val, enums.get(name)))
        top = c_name("__" + prefix, "max")
        if enums.get(top) != nxt:
            bad.append("%s=%s (header %s)" % (top, nxt, enums.get(top)))
        check(not bad, "attribute set %s: names and values match the header"
              % aset["name"], "; ".join(bad))
        sets[aset["name"]] = attrs

    ops = spec["operations"]
    prefix = ops["name-prefix"]
    bad = []
    for i, op in enumerate(ops["list"]):
        val = op.get("value", i)
        if enums.get(c_name(prefix, op["name"])) != val:
            bad.append(op["name"])
    check(not bad, "commands match enum xray_fdr_cmd", "mismatched: %s" % bad)

    types = {"u8": "NLA_U8", "u16": "NLA_U16", "u32": "NLA_U32",
             "u64": "NLA_U64"}
    ranges = {m[0]: (int(m[1]), int(m[2])) for m in re.findall(
        r"netlink_range_validation\s+(\w+)\s*=\s*\{\s*\.min\s*=\s*(\d+),"
        r"\s*\.max\s*=\s*(\d+),?\s*\}", kernel)}
    for op in ops["list"]:
        if "do" not in op:
            continue
        attrs = sets[op["attribute-set"]]
        wanted = op["do"].get("request", {}).get("attributes", [])
        pname = "xfdr_%s_nl_policy" % op["name"].replace("-", "_")
        m = re.search(r"nla_policy\s+%s\s*\[[^\]]*\]\s*=\s*\{(.*?)\n\s*\};"
                      % pname, kernel, flags=re.S)
        if not m:
            check(False, "%s has its own policy %s" % (op["name"], pname))
            continue
        entries = dict(re.findall(r"\[(\w+)\]\s*=\s*([^\n]+?),?\n", m.group(1)
                                  + "\n"))
        problems = []
        for a in wanted:
            cname, spec_attr = attrs[a]
            pol = entries.pop(cname, None)
            if pol is None:
                problems.append("%s missing" % cname)
                continue
            ty = types.get(spec_attr["type"])
            if ty and ty not in pol:
                problems.append("%s is not %s: %s" % (cname, ty, pol))
            checks = spec_attr.get("checks", {})
            lo, hi = checks.get("min"), checks.get("max")
            rm = re.search(r"NLA_POLICY_FULL_RANGE\(\w+, &(\w+)\)", pol)
            if rm:
                got = ranges.get(rm.group(1))
            elif "NLA_POLICY_RANGE" in pol:
                nums = re.findall(r"(\d+)", pol.split(",", 1)[1])
                got = (int(nums[0]), int(nums[1]))
            elif "NLA_POLICY_MIN" in pol:
                got = (int(re.findall(r"(\d+)\)", pol)[0]), None)
            elif "NLA_POLICY_MAX" in pol:
                got = (None, int(re.findall(r"(\d+)\)", pol)[0]))
            else:
                got = (None, None)
            if got != (lo, hi):
                problems.append("%s range %s, spec %s" % (cname, got, (lo, hi)))
        for extra, pol in entries.items():
            if "NLA_REJECT" not in pol:
                problems.append("%s accepted but not in the spec" % extra)
        check(not problems, "%s: policy %s accepts exactly the spec's request"
              % (op["name"], pname), "; ".join(problems))

        admin = "admin-perm" in op.get("flags", [])
        block = re.search(r"\{\s*\.cmd\s*=\s*%s,(.*?)\}" %
                          c_name(prefix, op["name"]), kernel, flags=re.S)
        has_admin = bool(block and "GENL_ADMIN_PERM" in block.group(1))
        has_policy = bool(block and pname in block.group(1))
        check(block is not None and admin == has_admin and has_policy,
              "%s: genl_ops entry uses its policy%s" %
              (op["name"], ", GENL_ADMIN_PERM" if admin else ""))

    groups = [g["name"] for g in spec.get("mcast-groups", {}).get("list", [])]
    check(groups == [defines.get("XRAY_FDR_GENL_MCGRP_MONITOR")],
          "multicast groups match XRAY_FDR_GENL_MCGRP_MONITOR")

    with open(SYSFS) as f:
        sysfs = strip_comments(f.read())
    with open(ABI) as f:
        abi = f.read()
    created = set(re.findall(r"^XFDR_VALUE_ATTR\((\w+)\);", sysfs, flags=re.M))
    created |= set(re.findall(r"__ATTR_RO\((\w+)\)", sysfs))
    documented = set(re.findall(r"^What:\s+/sys/kernel/xrayfdr/(\w+)$", abi,
                                flags=re.M))
    check(created and created == documented,
          "sysfs files match Documentation/ABI/testing/sysfs-kernel-xrayfdr",
          "undocumented: %s; documented, not created: %s"
          % (sorted(created - documented), sorted(documented - created)))
    for name in ("tsc_khz", "constant_tsc", "nonstop_tsc", "tsc_reliable"):
        check(name in created, "sysfs has %s, which the runtime reads" % name)

    print("1..%d" % len(results))
    for i, (ok, desc, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
        if not ok and detail:
            print("# " + detail)
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
