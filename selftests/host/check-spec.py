#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The netlink family three ways must agree: its YAML spec
(Documentation/netlink/specs/xrayfdr.yaml), the uapi header's enums and
defines (include/uapi/linux/xray_fdr.h) and the kernel's policies
(kmod/netlink.c): the policies accept exactly the spec's requests with
its ranges, and what the kernel puts in replies has the spec's types,
is in the spec's replies, and repeats only where the spec says multi-attr.
And the sysfs files the kernel creates (kmod/sysfs.c), with their modes,
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


def call_args(text, pos):
    """The arguments of the call whose "(" is at @pos, split at top-level
    commas, and the offset past its ")"."""
    depth, args, start = 0, [], pos + 1
    for i in range(pos, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(text[start:i].strip())
                return args, i + 1
        elif c == "," and depth == 1:
            args.append(text[start:i].strip())
            start = i + 1
    return args, len(text)


def loop_start(text, pos):
    """Where the body of the innermost for, while or *for_each* loop
    around @pos starts, or None: the header of every enclosing block, and
    of the statement itself when a loop body has no braces."""
    loop = re.compile(r"\b(for|while|\w*for_each\w*)\s*\(")

    def header(end):
        start = max(text.rfind(";", 0, end), text.rfind("{", 0, end),
                    text.rfind("}", 0, end))
        return text[start + 1:end]

    m = loop.search(header(pos))
    if m:
        return pos - len(header(pos)) + m.start()
    depth = 0
    for i in range(pos - 1, -1, -1):
        if text[i] == "}":
            depth += 1
        elif text[i] == "{":
            if depth:
                depth -= 1
            elif loop.search(header(i)):
                return i
    return None


def abi_entries(text):
    """{file name: description} of an ABI document's /sys/kernel/xrayfdr/
    entries."""
    entries = {}
    for block in re.split(r"\n(?=What:)", text):
        m = re.match(r"What:\s+/sys/kernel/xrayfdr/(\w+)\n", block)
        if m:
            desc = block.split("Description:", 1)
            entries[m.group(1)] = desc[1] if len(desc) == 2 else ""
    return entries


def abi_mode(desc):
    """The mode an ABI description states: "mode 0NNN" if it says so,
    else what its (RO), (RW) or (WO) means for everyone."""
    m = re.search(r"\bmode (0[0-7]{3})\b", desc)
    if m:
        return int(m.group(1), 8)
    m = re.match(r"\s*\((RO|RW|WO)\b", desc)
    return {"RO": 0o444, "RW": 0o644, "WO": 0o200}.get(m and m.group(1))


def sysfs_files(text):
    """{name: mode} of the attributes in kmod/sysfs.c's attribute array,
    mode None where its declaration is not understood."""
    value_mode = re.search(r"#define\s+XFDR_VALUE_ATTR\(_name\).*?"
                           r"__ATTR\(_name,\s*(0[0-7]+)", text, flags=re.S)
    modes = {}
    for name in re.findall(r"^XFDR_VALUE_ATTR\((\w+)\);", text, flags=re.M):
        modes[name] = int(value_mode.group(1), 8) if value_mode else None
    fixed = {"__ATTR_RO": 0o444, "__ATTR_RW": 0o644, "__ATTR_WO": 0o200}
    for name, macro, args in re.findall(
            r"kobj_attribute\s+xfdr_attr_(\w+)\s*=\s*(__ATTR\w*)\(([^)]*)\)",
            text):
        args = [a.strip() for a in args.split(",")]
        if args[0] != name:
            modes[name] = None
        elif macro in fixed:
            modes[name] = fixed[macro]
        elif macro in ("__ATTR", "__ATTR_RO_MODE", "__ATTR_RW_MODE") and \
                len(args) > 1 and re.match(r"0[0-7]+$", args[1]):
            modes[name] = int(args[1], 8)
        else:
            modes[name] = None
    array = re.search(r"attribute\s*\*\s*xfdr_attrs\[\]\s*=\s*\{(.*?)\};",
                      text, flags=re.S)
    listed = re.findall(r"&xfdr_attr_(\w+)\.attr",
                        array.group(1) if array else "")
    return {name: modes.get(name) for name in listed}


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


def check_puts(spec, sets, kernel):
    """What kmod/netlink.c puts in messages against the spec: the type of
    each attribute, the pad of each u64, every attribute put is in a
    reply or event (or in a nested set), every one of those is put, and
    an attribute put in a loop is multi-attr (and the reverse)."""
    # C name -> (set name, attribute, C name of the set's pad)
    names = {}
    for aset in spec["attribute-sets"]:
        pad = [c_name(aset["name-prefix"], a["name"])
               for a in aset["attributes"] if a["type"] == "pad"]
        for a in aset["attributes"]:
            names[c_name(aset["name-prefix"], a["name"])] = (
                aset["name"], a, pad[0] if pad else None)
    sent = set()
    for op in spec["operations"]["list"]:
        attrs = sets.get(op.get("attribute-set"), {})
        for part in (op.get("do", {}).get("reply"),
                     op.get("dump", {}).get("reply"), op.get("event")):
            for a in (part or {}).get("attributes", []):
                if a in attrs:
                    sent.add(attrs[a][0])
    for aset in spec["attribute-sets"]:
        for a in aset["attributes"]:
            if a.get("nested-attributes") and \
                    c_name(aset["name-prefix"], a["name"]) in sent:
                sent |= {cname for cname, a2 in
                         sets.get(a["nested-attributes"], {}).values()
                         if a2["type"] not in ("unused", "pad")}

    putters = {"nla_put_u8": "u8", "nla_put_u16": "u16", "nla_put_u32": "u32",
               "nla_put_u64_64bit": "u64", "nla_put_s32": "s32",
               "nla_put_string": "string", "nla_put_flag": "flag",
               "nla_nest_start": "nest", "nla_nest_start_noflag": "nest"}
    tables = {m[0]: re.findall(r"\{\s*(XRAY_FDR_A_\w+)\s*,", m[1])
              for m in re.findall(r"\b(\w+)\[\]\s*=\s*\{(.*?)\n\};", kernel,
                                  flags=re.S)}
    problems = []
    put = set()
    looped = set()
    for m in re.finditer(r"\b(nla_put\w*|nla_nest_start\w*)\s*\(", kernel):
        fn = m.group(1)
        args, _ = call_args(kernel, m.end() - 1)
        if len(args) < 2:
            continue
        t = re.match(r"(\w+)\[\w+\]\.attr$", args[1])
        if re.match(r"XRAY_FDR_A_\w+$", args[1]):
            cnames = [args[1]]
        elif t and tables.get(t.group(1)):
            cnames = tables[t.group(1)]
        else:
            problems.append("%s(%s): cannot tell the attribute"
                            % (fn, args[1]))
            continue
        for cname in cnames:
            put.add(cname)
            # repeated: in a loop, and not in a nest each pass opens
            start = loop_start(kernel, m.start())
            if re.match(r"XRAY_FDR_A_\w+$", args[1]) and \
                    start is not None and not re.search(
                        r"\bnla_nest_start\w*\s*\(", kernel[start:m.start()]):
                looped.add(cname)
            if cname not in names:
                problems.append("%s puts %s, in no attribute set"
                                % (fn, cname))
                continue
            _, attr, pad = names[cname]
            if putters.get(fn) != attr["type"]:
                problems.append("%s puts %s, a %s in the spec"
                                % (fn, cname, attr["type"]))
            if fn == "nla_put_u64_64bit" and (len(args) != 4 or
                                              args[3] != pad):
                problems.append("%s pads with %s, not its set's pad %s"
                                % (cname, args[3:], pad))
    for cname in sorted(put - sent):
        if cname in names:
            problems.append("%s is put but in no reply or event" % cname)
    for cname in sorted(sent - put):
        problems.append("%s is in a reply or event but never put" % cname)
    multi = {cname for cname, (_, a, _) in names.items()
             if a.get("multi-attr")}
    for cname in sorted(looped - multi):
        problems.append("%s is put in a loop but is not multi-attr" % cname)
    for cname in sorted(multi - looped):
        problems.append("%s is multi-attr but not put in a loop" % cname)
    check(not problems, "kmod/netlink.c puts what the spec's replies say",
          "; ".join(problems))


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

    # Nests name a set; messages name attributes of their set; every set
    # is used; multi-attr only where the kernel does not parse the
    # attribute with a policy (which keeps the last instance only).
    problems = []
    used = set()
    for aset in spec["attribute-sets"]:
        for a in aset["attributes"]:
            nested = a.get("nested-attributes")
            if (a["type"] == "nest") != (nested is not None):
                problems.append("%s.%s: nest without nested-attributes, or "
                                "the reverse" % (aset["name"], a["name"]))
            elif nested is not None and nested not in sets:
                problems.append("%s.%s: no attribute set %s"
                                % (aset["name"], a["name"], nested))
            elif nested is not None:
                used.add(nested)
    for op in spec["operations"]["list"]:
        if "attribute-set" not in op:
            continue
        used.add(op["attribute-set"])
        attrs = sets.get(op["attribute-set"], {})
        for kind in ("do", "dump"):
            for part in ("request", "reply"):
                for a in op.get(kind, {}).get(part, {}).get("attributes", []):
                    if a not in attrs:
                        problems.append("%s %s %s: no attribute %s"
                                        % (op["name"], kind, part, a))
                    elif part == "request" and \
                            attrs[a][1].get("multi-attr"):
                        problems.append("%s: request attribute %s is "
                                        "multi-attr" % (op["name"], a))
        for a in op.get("event", {}).get("attributes", []):
            if a not in attrs:
                problems.append("%s event: no attribute %s" % (op["name"], a))
    unused = sorted(set(sets) - used)
    if unused:
        problems.append("attribute sets used nowhere: %s" % unused)
    check(not problems, "nests, messages and multi-attr are consistent",
          "; ".join(problems))

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
    # An omitted .min is no bound (0, unsigned); an omitted .max is 0.
    ranges = {}
    for name, body in re.findall(
            r"netlink_range_validation\s+(\w+)\s*=\s*\{(.*?)\}", kernel,
            flags=re.S):
        fields = dict(re.findall(r"\.(min|max)\s*=\s*(\d+)", body))
        ranges[name] = (int(fields["min"]) if "min" in fields else None,
                        int(fields.get("max", 0)))
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

    check_puts(spec, sets, kernel)

    groups = [g["name"] for g in spec.get("mcast-groups", {}).get("list", [])]
    check(groups == [defines.get("XRAY_FDR_GENL_MCGRP_MONITOR")],
          "multicast groups match XRAY_FDR_GENL_MCGRP_MONITOR")

    with open(SYSFS) as f:
        sysfs = strip_comments(f.read())
    with open(ABI) as f:
        abi = abi_entries(f.read())
    files = sysfs_files(sysfs)
    created, documented = set(files), set(abi)
    check(created and created == documented,
          "sysfs files match Documentation/ABI/testing/sysfs-kernel-xrayfdr",
          "undocumented: %s; documented, not created: %s"
          % (sorted(created - documented), sorted(documented - created)))
    bad = ["%s: kernel %s, documented %s"
           % (name, oct(mode) if mode is not None else "not understood",
              oct(abi_mode(abi[name])) if abi_mode(abi[name]) else "nothing")
           for name, mode in sorted(files.items())
           if name in abi and (mode is None or mode != abi_mode(abi[name]))]
    check(created and not bad, "sysfs files have the documented modes",
          "; ".join(bad))
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
