# The xrayfdr command and its subcommands
TOOL_SRCS += tools/xrayfdr.c tools/util.c tools/cmd_dump.c tools/cmd_synth.c \
	tools/cmd_record.c
