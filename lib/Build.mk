# libxrayfdr: common pieces (see lib/fdr/Build.mk for the format library)
LIB_SRCS += lib/log.c lib/util/u64map.c lib/util/outfile.c lib/util/losses.c lib/util/crc32c.c lib/xray/instr_map.c lib/filter/filter.c
LIB_LDLIBS += -lelf
TOOL_LDLIBS += -lelf
